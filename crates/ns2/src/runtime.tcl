# ---------------------------------------------------------------------------
# The summary: what `aqmlab run --json` reports, measured on ns-2.
#
# Queues are measured from a packet trace of every queue that can drop or is
# reported ($aq(trace)): '+' arrival, '-' start of transmission, 'd' drop
# ('e' an early drop of RED), one line per event. The counters of the agents
# (TCP senders, sinks, loss monitors) are read at the warmup, when agents
# are done with (a `file` transfer's, a web connection's) and at the end, so
# flows are measured over the same window [warmup, duration] as aqmlab's.

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
                    # A flow's drops are of what it sent, as aqmlab counts
                    # them: its ACKs are not (a web request's ACKs share
                    # the queue with the responses).
                    if {$type ne "ack"} { incr st(fid,$fid,drops) }
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

# Count, mean, population standard deviation and the 50th, 95th and 99th
# percentiles (the ceil(n p)-th smallest) of the times xs, as JSON.
proc aq_times {xs} {
    set n [llength $xs]
    if {$n == 0} {
        return [aq_obj [list count 0 mean_s null std_s null p50_s null p95_s null p99_s null]]
    }
    set xs [lsort -real $xs]
    set s 0.0
    foreach x $xs { set s [expr {$s + $x}] }
    set m [expr {$s / $n}]
    set v 0.0
    foreach x $xs { set v [expr {$v + ($x - $m) * ($x - $m)}] }
    set pairs [list count $n mean_s [aq_num $m] std_s [aq_num [expr {sqrt($v / $n)}]]]
    foreach {k p} {p50_s 0.5 p95_s 0.95 p99_s 0.99} {
        set j [expr {max(0, int(ceil($n * $p)) - 1)}]
        lappend pairs $k [aq_num [lindex $xs $j]]
    }
    return [aq_obj $pairs]
}

proc aq_in_window {t} {
    global aq
    return [expr {$t >= $aq(warmup) && $t <= $aq(duration)}]
}

# ---------------------------------------------------------------------------
# `file`: one transfer after another, each on a fresh sender/sink pair. The
# sink's application hears of every byte delivered in order, so a transfer
# ends, as in aqmlab, when its last packet reaches the receiver (not when
# the sender has the last ACK), and the next one starts a drawn gap later.

Class Application/AqTransfer -superclass Application
Application/AqTransfer instproc recv {nbytes} {
    global aqapp
    aq_file_recv $aqapp($self) $self
}

proc aq_file_next {i} {
    global ns n aq aqflow aqfile aqacc aqapp
    set g $aqflow($i,gi)
    set size [expr {max(1, round([$aqfile($g,size) value]))}]
    set pay $aqflow($i,payload)
    set hdr $aqflow($i,hdr)
    # ns-2's one-way TCP sends whole packets: the last is padded to the
    # payload size (aqmlab sends it short).
    set pkts [expr {($size + $pay - 1) / $pay}]
    set s [aq_sender_$g $i]
    set k [aq_sink_$g $i]
    # An agent resets itself when it is made, with the class's defaults;
    # the settings take effect with a reset (which `$ns run` gives the
    # agents made before it).
    $s reset
    $k reset
    $ns attach-agent $n($aqflow($i,srcn)) $s
    $ns attach-agent $n($aqflow($i,dstn)) $k
    $ns connect $s $k
    aq_adopt $i $s $k
    set app [new Application/AqTransfer]
    set aqapp($app) $i
    $app attach-agent $k
    $app start
    set aqfile($i,app) $app
    set aqfile($i,need) [expr {$aqflow($i,syn) * $hdr + $pkts * ($pay + $hdr)}]
    set aqfile($i,padding) [expr {$pkts * $pay - $size}]
    set aqfile($i,start) [$ns now]
    $s advanceby $pkts
}

proc aq_file_recv {i app} {
    global ns n aq aqflow aqfile aqacc aqxfer
    if {$aqfile($i,app) ne $app} { return }
    if {[$aqflow($i,sink) set bytes_] < $aqfile($i,need)} { return }
    set now [$ns now]
    set g $aqflow($i,gi)
    if {[aq_in_window $now]} {
        lappend aqxfer($g) [expr {$now - $aqfile($i,start)}]
        incr aqacc($i,transfers)
        # The padding of the last packet was delivered in the window.
        incr aqacc($i,padding) $aqfile($i,padding)
    }
    # The connection closes, as in aqmlab: the sender sends nothing more
    # and packets still on their way are absorbed (a detached agent's port
    # leads to the null agent).
    set s $aqflow($i,agent)
    set k $aqflow($i,sink)
    aq_retire $i
    $ns detach-agent $n($aqflow($i,srcn)) $s
    $ns detach-agent $n($aqflow($i,dstn)) $k
    $s reset
    set aqfile($i,app) ""
    $ns at [expr {$now + [$aqfile($g,gap) value]}] [list aq_file_next $i]
}

# ---------------------------------------------------------------------------
# `batch-poisson`: a UDP agent told to send a batch of whole packets at
# once, one gap after another.

proc aq_batch {i} {
    global ns aqflow aqbatch
    set g $aqflow($i,gi)
    set nb [expr {max(1, round([$aqbatch($g,batch) value]))}]
    $aqflow($i,agent) send [expr {$nb * $aqflow($i,payload)}]
    set next [expr {[$ns now] + [$aqbatch($g,gap) value]}]
    if {$next < $aqbatch($g,stop)} { $ns at $next [list aq_batch $i] }
}

# ---------------------------------------------------------------------------
# `web`: the connections of a WebTraf pool. aqwo($sender) describes an open
# one: [list group request? sink counters-at-open-or-warmup].

proc aq_web_active {g delta} {
    global aq aqw ns
    set now [$ns now]
    set dt [expr {min($now, $aq(duration)) - max($aqw($g,since), $aq(warmup))}]
    if {$dt > 0} { set aqw($g,area) [expr {$aqw($g,area) + $aqw($g,active) * $dt}] }
    set aqw($g,since) $now
    incr aqw($g,active) $delta
}

proc aq_web_open {g s k req} {
    global aqw aqwo ns
    set aqwo($s) [list $g $req $k [aq_counters $s $k]]
    aq_web_active $g 1
}

# Adds what connection s counted since its base to its group.
proc aq_web_count {s} {
    global aq aqw aqwo
    lassign $aqwo($s) g req k base
    set cur [aq_counters $s $k]
    foreach v [concat $aq(svars) bytes_] x $cur b $base {
        set aqw($g,$v) [expr {$aqw($g,$v) + [aq_grow $x $b]}]
    }
    # Whole packets delivered (a SYN's header is less than one).
    set d [expr {[aq_grow [lindex $cur end] [lindex $base end]] / ($aqw($g,payload) + $aqw($g,hdr))}]
    incr aqw($g,dpkts) $d
    if {$req} { incr aqw($g,reqpkts) $d }
    return $cur
}

proc aq_web_close {g s} {
    global aq aqwo ns
    if {[$ns now] >= $aq(warmup)} { aq_web_count $s }
    unset aqwo($s)
    aq_web_active $g -1
}

proc aq_web_launch {g id pid} {
    global aqobj aqpage ns
    set aqobj($id) [$ns now]
    if {![info exists aqpage($pid,start)]} {
        set aqpage($pid,start) [$ns now]
        set aqpage($pid,done) 0
    }
}

proc aq_web_object_done {g id pid} {
    global aqw aqobj aqpage ns
    set now [$ns now]
    set in [aq_in_window $now]
    if {$in} { lappend aqw($g,objects) [expr {$now - $aqobj($id)}] }
    unset aqobj($id)
    incr aqpage($pid,done)
    # A page is done when its last object is; the count is known only when
    # objects_per_page is a constant.
    if {$aqw($g,per_page) ne "null" && $aqpage($pid,done) == $aqw($g,per_page)} {
        if {$in} { lappend aqw($g,pages) [expr {$now - $aqpage($pid,start)}] }
        unset aqpage($pid,start) aqpage($pid,done)
    }
}

proc aq_web_warmup {g} {
    global aqwo
    foreach s [array names aqwo] {
        lassign $aqwo($s) g2 req k
        if {$g2 eq $g} { lset aqwo($s) 3 [aq_counters $s $k] }
    }
}

proc aq_web_json {g} {
    global aq aqw aqwo st
    foreach s [array names aqwo] {
        if {[lindex $aqwo($s) 0] eq $g} { lset aqwo($s) 3 [aq_web_count $s] }
    }
    aq_web_active $g 0
    set w [expr {double($aq(duration) - $aq(warmup))}]
    set fid $aqw($g,fid)
    set drops [expr {[info exists st(fid,$fid,drops)] ? $st(fid,$fid,drops) : 0}]
    set sent $aqw($g,ndatapack_)
    set pay $aqw($g,payload)
    set pages [expr {$aqw($g,per_page) eq "null" ? "null" : [aq_times $aqw($g,pages)]}]
    return [list sent $sent delivered $aqw($g,dpkts) drops $drops \
        goodput_bps [aq_num [expr {($aqw($g,dpkts) - $aqw($g,reqpkts)) * $pay * 8.0 / $w}]] \
        throughput_bps [aq_num [expr {($aqw($g,ndatabytes_) + $aqw($g,hdr) * $sent) * 8.0 / $w}]] \
        loss_rate [aq_num [aq_ratio $drops $sent]] delay_mean_s null delay_std_s null \
        retransmits $aqw($g,nrexmitpack_) timeouts $aqw($g,nrexmit_) fast_retransmits null \
        ecn_reductions $aqw($g,necnresponses_) transfers [aq_times {}] \
        request_goodput_bps [aq_num [expr {$aqw($g,reqpkts) * $pay * 8.0 / $w}]] \
        objects [aq_times $aqw($g,objects)] pages $pages \
        active_connections_mean [aq_num [expr {$aqw($g,area) / $w}]]]
}

# ---------------------------------------------------------------------------

# Per-flow figures over the window; returns the JSON object and leaves the
# numbers in aqf($i,...) for the group totals.
proc aq_flow_json {i} {
    global aq aqflow aqf aqacc aqend aqbase st
    set w [expr {double($aq(duration) - $aq(warmup))}]
    set fid $aqflow($i,fid)
    set drops [expr {[info exists st(fid,$fid,drops)] ? $st(fid,$fid,drops) : 0}]
    set hdr $aqflow($i,hdr)
    set pay $aqflow($i,payload)
    if {$aqflow($i,tcp)} {
        # ns-2 counts the SYN among the data packets, as aqmlab.
        set sent [aq_diff $i ndatapack_]
        # The sink counts whole packets (payload and header) delivered in
        # order, and a SYN's header; each transfer's count is whole.
        set delivered [expr {$aqacc($i,dpkts) + [aq_grow $aqend($i,bytes_) $aqbase($i,bytes_)] / ($pay + $hdr)}]
        set dbytes [expr {wide($delivered) * $pay - $aqacc($i,padding)}]
        set tput [expr {([aq_diff $i ndatabytes_] + $hdr * $sent) * 8.0 / $w}]
        set s $aqflow($i,agent)
        if {$s ne ""} {
            set cw [aq_num [$s set cwnd_]]; set ss [$s set ssthresh_]
        } else {
            set cw null; set ss null
        }
        set extra [list retransmits [aq_diff $i nrexmitpack_] timeouts [aq_diff $i nrexmit_] \
            fast_retransmits null ecn_reductions [aq_diff $i necnresponses_] cwnd $cw ssthresh $ss]
        if {$aqflow($i,file)} { lappend extra transfers $aqacc($i,transfers) }
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
    global aq aqq aqgrp aqflow aqf st ns aqxfer
    aq_read_end
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
    foreach i $aq(flows) { lappend flows [aq_flow_json $i] }
    set w [expr {double($aq(duration) - $aq(warmup))}]
    set groups {}
    set jain_x {}
    foreach g $aq(groups) {
        set head [list kind [aq_str $aqgrp($g,kind)] class [aq_str $aqgrp($g,class)] flows $aqgrp($g,count)]
        if {$aqgrp($g,kind) eq "web"} {
            lappend groups $g [aq_obj [concat $head [aq_web_json $aqgrp($g,index)]]]
            continue
        }
        foreach k {sent delivered drops goodput tput} { set sum($k) 0 }
        foreach k {retransmits timeouts ecn_reductions} { set sum($k) 0 }
        foreach i $aqgrp($g,flows) {
            foreach k {sent delivered drops goodput tput} { set sum($k) [expr {$sum($k) + $aqf($i,$k)}] }
            foreach {k v} $aqf($i,extra) {
                if {[info exists sum($k)]} { set sum($k) [expr {$sum($k) + $v}] }
            }
            # Fairness among the bulk flows that sent in the window, as aqmlab.
            if {$aqflow($i,bulk) && $aqf($i,sent) > 0} { lappend jain_x $aqf($i,goodput) }
        }
        set pairs [concat $head [list sent $sum(sent) delivered $sum(delivered) drops $sum(drops) \
            goodput_bps [aq_num $sum(goodput)] throughput_bps [aq_num $sum(tput)] \
            loss_rate [aq_num [aq_ratio $sum(drops) $sum(sent)]] delay_mean_s null delay_std_s null]]
        if {$aqgrp($g,tcp)} {
            lappend pairs retransmits $sum(retransmits) timeouts $sum(timeouts) fast_retransmits null \
                ecn_reductions $sum(ecn_reductions)
        }
        if {$aqgrp($g,kind) eq "file"} {
            set gi $aqgrp($g,index)
            lappend pairs transfers [aq_times [expr {[info exists aqxfer($gi)] ? $aqxfer($gi) : {}}]]
        }
        lappend groups $g [aq_obj $pairs]
    }
    set n [llength $jain_x]
    set s 0.0; set s2 0.0
    foreach x $jain_x { set s [expr {$s + $x}]; set s2 [expr {$s2 + $x * $x}] }
    set jain [expr {($n > 0 && $s2 > 0) ? $s * $s / ($n * $s2) : "null"}]
    set fair [expr {$n > 0 ? [list fairness [aq_obj [list jain [aq_num $jain] flows $n]]] : {}}]
    puts [aq_obj [concat [list scenario [aq_str $aq(name)] seed $aq(seed) simulator [aq_str ns-2] \
        engine_version [aq_str [ns-version]] duration_s [aq_num $aq(duration)] warmup_s [aq_num $aq(warmup)] \
        queues [aq_obj $queues] traffic [aq_obj $groups] flows "\[[join $flows {, }]\]"] $fair]]
    exit 0
}
