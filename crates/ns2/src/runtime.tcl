# ---------------------------------------------------------------------------
# The summary: what `aqmlab run --json` reports, measured on ns-2.
#
# Queues are measured from a packet trace of every queue that can drop or is
# reported ($aq(trace)): '+' arrival, '-' start of transmission, 'd' drop
# ('e' an early drop of RED), one line per event. The counters of the agents
# (TCP senders, sinks, loss monitors) are read at the warmup and at the end,
# so flows are measured over the same window [warmup, duration] as aqmlab's.

# Reads the agents' counters into aqsnap($tag,...).
proc aq_snapshot {tag} {
    global aq aqflow aqsnap
    for {set i 0} {$i < $aq(nflows)} {incr i} {
        if {$aqflow($i,tcp)} {
            set s $aqflow($i,agent)
            set k $aqflow($i,sink)
            foreach v {ndatapack_ ndatabytes_ nrexmitpack_ nrexmit_ necnresponses_} {
                set aqsnap($tag,$i,$v) [$s set $v]
            }
            set aqsnap($tag,$i,bytes_) [$k set bytes_]
        } else {
            set k $aqflow($i,sink)
            set aqsnap($tag,$i,npkts_) [$k set npkts_]
            set aqsnap($tag,$i,bytes_) [$k set bytes_]
        }
    }
}

# The growth of counter v of flow i over the window. ns-2 keeps several
# counters (the sinks' bytes_ among them) in 32-bit ints that wrap past
# 2^31; the difference modulo 2^32 is right while the window's growth
# stays below 4 GB.
proc aq_diff {i v} {
    global aqsnap
    return [expr {wide($aqsnap(e,$i,$v) - $aqsnap(w,$i,$v)) % 4294967296}]
}

# A number as JSON: NaN and infinities are null.
proc aq_num {x} {
    if {$x eq "null"} { return null }
    if {[string is integer -strict $x]} { return $x }
    if {$x != $x || [string match -nocase *inf* $x]} { return null }
    # Tcl prints a double in its shortest form that reads back exactly.
    return [expr {double($x)}]
}

proc aq_str {s} {
    return "\"[string map {\\ \\\\ \" \\\" \n \\n \t \\t} $s]\""
}

proc aq_obj {pairs} {
    set out {}
    foreach {k v} $pairs { lappend out "[aq_str $k]: $v" }
    return "\{[join $out {, }]\}"
}

# Mean, population standard deviation and maximum of samples kept as n, sum,
# sum of squares and maximum.
proc aq_moments {n s s2 mx} {
    if {$n == 0} { return [list null null null] }
    set m [expr {$s / $n}]
    set v [expr {$s2 / $n - $m * $m}]
    if {$v < 0} { set v 0.0 }
    return [list $m [expr {sqrt($v)}] $mx]
}

proc aq_ratio {a b} {
    if {$b == 0} { return null }
    return [expr {double($a) / $b}]
}

# Parses the trace into the per-queue and per-flow tallies.
proc aq_read_trace {} {
    global aq aqq aqlink aqfid st
    set w0 $aq(warmup)
    set w1 $aq(duration)
    set ch [open $aq(trace) r]
    fconfigure $ch -buffering full -buffersize 1048576
    while {[gets $ch line] >= 0} {
        lassign [split $line " "] ev t from to type size flags fid src dst seq id
        if {![info exists aqlink($from:$to)]} { continue }
        set q $aqlink($from:$to)
        set in [expr {$t >= $w0 && $t <= $w1}]
        set cls $aqfid($fid,class)
        # Backlog integral (packets waiting, not the one being sent).
        set dt [expr {min($t, $w1) - max($st($q,last), $w0)}]
        if {$dt > 0} {
            set b $st($q,qlen)
            set st($q,area) [expr {$st($q,area) + $b * $dt}]
            set st($q,area2) [expr {$st($q,area2) + $b * $b * $dt}]
        }
        set st($q,last) $t
        switch -- $ev {
            + {
                incr st($q,qlen)
                # The previous arrival was accepted unless it was dropped.
                if {$st($q,pending) ne ""} { aq_accepted $q }
                set st($q,pending) $id
                set st($q,pending_in) $in
                set st($q,t,$id) $t
                set st($q,ce,$id) [string index $flags 4]
                if {$in} {
                    incr st($q,arrivals)
                    incr st($q,$cls,arrivals)
                }
            }
            - {
                incr st($q,qlen) -1
                set ta $st($q,t,$id)
                set ce $st($q,ce,$id)
                unset st($q,t,$id) st($q,ce,$id)
                set tx [expr {$size * 8.0 / $aqq($q,rate)}]
                set busy [expr {min($t + $tx, $w1) - max($t, $w0)}]
                if {$busy > 0} { set st($q,busy) [expr {$st($q,busy) + $busy}] }
                if {$in} {
                    incr st($q,departures)
                    set d [expr {$t - $ta}]
                    foreach k [list $q $q,$cls] {
                        incr st($k,dn)
                        set st($k,ds) [expr {$st($k,ds) + $d}]
                        set st($k,ds2) [expr {$st($k,ds2) + $d * $d}]
                        if {$d > $st($k,dmax)} { set st($k,dmax) $d }
                    }
                    if {$ce ne "E" && [string index $flags 4] eq "E"} { incr st($q,marks) }
                }
            }
            d - e {
                incr st($q,qlen) -1
                if {[info exists st($q,t,$id)]} { unset st($q,t,$id) st($q,ce,$id) }
                if {$st($q,pending) eq $id} {
                    # The arrival itself was dropped: it extends a loss run.
                    set st($q,pending) ""
                    if {$in} { incr st($q,run) }
                } elseif {$st($q,pending) ne ""} {
                    # Another packet was dropped because of the arrival.
                    if {$in} { incr st($q,run) }
                    set st($q,pending) ""
                    set st($q,pending_dropped_other) 1
                }
                if {$in} {
                    incr st($q,drops_$ev)
                    incr st($q,$cls,drops)
                    incr st(fid,$fid,drops)
                }
            }
        }
    }
    close $ch
    foreach q $aq(queues) {
        set dt [expr {$w1 - max($st($q,last), $w0)}]
        if {$dt > 0} {
            set b $st($q,qlen)
            set st($q,area) [expr {$st($q,area) + $b * $dt}]
            set st($q,area2) [expr {$st($q,area2) + $b * $b * $dt}]
        }
    }
}

# The last arrival at queue q was accepted: it closes an open loss run.
proc aq_accepted {q} {
    global st
    if {$st($q,run) > 0} {
        if {$st($q,pending_in)} {
            set n $st($q,run)
            if {![info exists st($q,hist,$n)]} { set st($q,hist,$n) 0 }
            incr st($q,hist,$n)
        }
        set st($q,run) 0
    }
    set st($q,pending) ""
}

proc aq_queue_json {q} {
    global aq aqq st
    set w [expr {double($aq(duration) - $aq(warmup))}]
    set drops [expr {$st($q,drops_d) + $st($q,drops_e)}]
    if {$aqq($q,report) eq "ifdropped" && $drops == 0} { return "" }
    lassign [aq_moments $st($q,dn) $st($q,ds) $st($q,ds2) $st($q,dmax)] dm dsd dmx
    set qm [expr {$st($q,area) / $w}]
    set qv [expr {$st($q,area2) / $w - $qm * $qm}]
    if {$qv < 0} { set qv 0.0 }
    # Loss runs: histogram, mean and population variance.
    set runs 0; set s1 0.0; set s2 0.0; set hist {}
    foreach key [lsort -dictionary [array names st $q,hist,*]] {
        set n [lindex [split $key ,] end]
        set c $st($key)
        incr runs $c
        set s1 [expr {$s1 + $n * $c}]
        set s2 [expr {$s2 + $n * $n * $c}]
        lappend hist $n $c
    }
    set hist [lsort -integer -stride 2 -index 0 $hist]
    if {$runs > 0} {
        set rm [expr {$s1 / $runs}]
        set rv [expr {$s2 / $runs - $rm * $rm}]
    } else {
        set rm null; set rv null
    }
    set classes {}
    foreach c $aq(classes) {
        if {$st($q,$c,arrivals) == 0 && $st($q,$c,drops) == 0} { continue }
        lassign [aq_moments $st($q,$c,dn) $st($q,$c,ds) $st($q,$c,ds2) $st($q,$c,dmax)] cm csd cmx
        lappend classes $c [aq_obj [list arrivals $st($q,$c,arrivals) drops $st($q,$c,drops) \
            loss_rate [aq_num [aq_ratio $st($q,$c,drops) $st($q,$c,arrivals)]] \
            qdelay_mean_s [aq_num $cm] qdelay_std_s [aq_num $csd] qdelay_max_s [aq_num $cmx]]]
    }
    # ns-2 counts a RED drop above max_th and a buffer overflow alike as a
    # forced drop ('d'); a drop-tail queue has only overflows.
    if {$aqq($q,kind) eq "red"} {
        set forced $st($q,drops_d); set overflow null
    } else {
        set forced 0; set overflow $st($q,drops_d)
    }
    return [aq_obj [list \
        arrivals $st($q,arrivals) departures $st($q,departures) drops $drops \
        drops_overflow $overflow drops_early $st($q,drops_e) drops_forced $forced \
        marks $st($q,marks) \
        loss_rate [aq_num [aq_ratio $drops $st($q,arrivals)]] \
        qdelay_mean_s [aq_num $dm] qdelay_std_s [aq_num $dsd] qdelay_max_s [aq_num $dmx] \
        qlen_mean_pkts [aq_num $qm] qlen_var_pkts [aq_num $qv] \
        utilization [aq_num [expr {$st($q,busy) / $w}]] \
        consecutive_loss [aq_obj [list mean [aq_num $rm] var [aq_num $rv] hist [aq_obj $hist]]] \
        by_class [aq_obj $classes] \
        qdisc $aqq($q,qdisc) \
        link [aq_obj [list from [aq_str $aqq($q,from)] to [aq_str $aqq($q,to)] \
            rate_bps $aqq($q,rate) delay_s [aq_num $aqq($q,delay)]]]]]
}

# Per-flow figures over the window; returns the JSON object and leaves the
# numbers in aqf($i,...) for the group totals.
proc aq_flow_json {i} {
    global aq aqflow aqf st
    set w [expr {double($aq(duration) - $aq(warmup))}]
    set fid $aqflow($i,fid)
    set drops [expr {[info exists st(fid,$fid,drops)] ? $st(fid,$fid,drops) : 0}]
    set hdr $aqflow($i,hdr)
    set pay $aqflow($i,payload)
    if {$aqflow($i,tcp)} {
        # ns-2 does not count the SYN as a data packet; aqmlab does.
        set syn [expr {$aqflow($i,syn) && $aqflow($i,start) >= $aq(warmup) && $aqflow($i,start) <= $aq(duration)}]
        set sent [expr {[aq_diff $i ndatapack_] + $syn}]
        # The sink counts whole packets (payload and header) delivered in order.
        set delivered [expr {[aq_diff $i bytes_] / ($pay + $hdr)}]
        set dbytes [expr {wide($delivered) * $pay}]
        set tput [expr {([aq_diff $i ndatabytes_] + $hdr * $sent) * 8.0 / $w}]
        set extra [list retransmits [aq_diff $i nrexmitpack_] timeouts [aq_diff $i nrexmit_] \
            fast_retransmits null ecn_reductions [aq_diff $i necnresponses_] \
            cwnd [aq_num [$aqflow($i,agent) set cwnd_]] ssthresh [$aqflow($i,agent) set ssthresh_]]
    } else {
        set delivered [aq_diff $i npkts_]
        set dbytes [aq_diff $i bytes_]
        # Sent in the window: delivered or dropped (packets in flight at the
        # window's edges are not counted).
        set sent [expr {$delivered + $drops}]
        set tput [expr {$sent * $pay * 8.0 / $w}]
        set extra {}
    }
    set aqf($i,sent) $sent
    set aqf($i,delivered) $delivered
    set aqf($i,drops) $drops
    set aqf($i,goodput) [expr {$dbytes * 8.0 / $w}]
    set aqf($i,tput) $tput
    set aqf($i,extra) $extra
    return [aq_obj [concat [list group [aq_str $aqflow($i,group)] id $aqflow($i,id) \
        src [aq_str $aqflow($i,src)] dst [aq_str $aqflow($i,dst)] rtt_prop_s [aq_num $aqflow($i,rtt)] \
        sent $sent delivered $delivered drops $drops \
        goodput_bps [aq_num $aqf($i,goodput)] throughput_bps [aq_num $tput] \
        loss_rate [aq_num [aq_ratio $drops $sent]] delivered_bytes $dbytes] $extra]]
}

proc aq_finish {} {
    global aq aqq aqgrp aqflow aqf st ns
    aq_snapshot e
    $ns flush-trace
    close $aq(trace_ch)
    foreach q $aq(queues) {
        foreach k {arrivals departures drops_d drops_e marks run dn} { set st($q,$k) 0 }
        foreach k {area area2 busy ds ds2 dmax last} { set st($q,$k) 0.0 }
        set st($q,qlen) 0
        set st($q,pending) ""
        set st($q,pending_in) 0
        foreach c $aq(classes) {
            foreach k {arrivals drops dn} { set st($q,$c,$k) 0 }
            foreach k {ds ds2 dmax} { set st($q,$c,$k) 0.0 }
        }
    }
    aq_read_trace
    file delete $aq(trace)
    set queues {}
    foreach q $aq(queues) {
        set j [aq_queue_json $q]
        if {$j ne ""} { lappend queues $q $j }
    }
    set flows {}
    for {set i 0} {$i < $aq(nflows)} {incr i} { lappend flows [aq_flow_json $i] }
    set w [expr {double($aq(duration) - $aq(warmup))}]
    set groups {}
    set jain_x {}
    foreach g $aq(groups) {
        foreach k {sent delivered drops goodput tput} { set sum($k) 0 }
        foreach k {retransmits timeouts ecn_reductions} { set sum($k) 0 }
        foreach i $aqgrp($g,flows) {
            foreach k {sent delivered drops goodput tput} { set sum($k) [expr {$sum($k) + $aqf($i,$k)}] }
            foreach {k v} $aqf($i,extra) {
                if {[info exists sum($k)]} { set sum($k) [expr {$sum($k) + $v}] }
            }
            if {$aqflow($i,tcp)} { lappend jain_x $aqf($i,goodput) }
        }
        set pairs [list kind [aq_str $aqgrp($g,kind)] class [aq_str $aqgrp($g,class)] \
            flows [llength $aqgrp($g,flows)] sent $sum(sent) delivered $sum(delivered) drops $sum(drops) \
            goodput_bps [aq_num $sum(goodput)] throughput_bps [aq_num $sum(tput)] \
            loss_rate [aq_num [aq_ratio $sum(drops) $sum(sent)]] delay_mean_s null delay_std_s null]
        if {$aqgrp($g,tcp)} {
            lappend pairs retransmits $sum(retransmits) timeouts $sum(timeouts) fast_retransmits null \
                ecn_reductions $sum(ecn_reductions)
        }
        lappend groups $g [aq_obj $pairs]
    }
    set n [llength $jain_x]
    set s 0.0; set s2 0.0
    foreach x $jain_x { set s [expr {$s + $x}]; set s2 [expr {$s2 + $x * $x}] }
    set jain [expr {($n > 0 && $s2 > 0) ? $s * $s / ($n * $s2) : "null"}]
    puts [aq_obj [list scenario [aq_str $aq(name)] seed $aq(seed) simulator [aq_str ns-2] \
        engine_version [aq_str [ns-version]] duration_s [aq_num $aq(duration)] warmup_s [aq_num $aq(warmup)] \
        queues [aq_obj $queues] traffic [aq_obj $groups] flows "\[[join $flows {, }]\]" \
        fairness [aq_obj [list jain [aq_num $jain] flows $n]]]]
    exit 0
}
