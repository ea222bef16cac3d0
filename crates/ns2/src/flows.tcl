# ---------------------------------------------------------------------------
# The flows' counters over the window [warmup, duration]: the agents'
# counters are read when the window opens, when agents are done with (a
# `file` transfer's) and at the end; the summary at the end of the script
# turns them into figures.

# What is read from a TCP sender and from its sink.
set aq(svars) {ndatapack_ ndatabytes_ nrexmitpack_ nrexmit_ necnresponses_}

# The counters of sender s and sink k, sender's first.
proc aq_counters {s k} {
    global aq
    set out {}
    foreach v $aq(svars) { lappend out [$s set $v] }
    lappend out [$k set bytes_]
    return $out
}

# How far a counter grew from b to a. ns-2 keeps several counters (the
# sinks' bytes_ among them) in 32-bit ints that wrap past 2^31; the
# difference modulo 2^32 is right while the growth stays below 4 GB.
proc aq_grow {a b} {
    return [expr {wide($a - $b) % 4294967296}]
}

# Window accounting of a flow whose agents may change (a `file` flow opens
# a new pair per transfer): aqacc($i,v) holds what closed agents counted
# inside the window, aqbase($i,v) what the current agents had counted when
# the window opened or when they were created. A flow without current
# agents has aqflow($i,agent) "".
proc aq_vars {i} {
    global aq aqflow
    if {$aqflow($i,tcp)} { return [concat $aq(svars) bytes_] }
    return {npkts_ bytes_}
}

proc aq_current {i} {
    global aqflow
    set s $aqflow($i,agent)
    set k $aqflow($i,sink)
    if {$s eq ""} { return {} }
    if {$aqflow($i,tcp)} { return [aq_counters $s $k] }
    return [list [$k set npkts_] [$k set bytes_]]
}

proc aq_flow_init {i} {
    global aqacc aqbase
    foreach v [aq_vars $i] { set aqacc($i,$v) 0; set aqbase($i,$v) 0 }
    set aqacc($i,transfers) 0
    set aqacc($i,padding) 0
    set aqacc($i,dpkts) 0
}

# The current agents of flow i are done with: what they counted inside the
# window goes to the flow.
proc aq_retire {i} {
    global aq aqflow aqacc aqbase ns
    if {[$ns now] >= $aq(warmup)} {
        set cur [aq_current $i]
        foreach v [aq_vars $i] x $cur {
            set aqacc($i,$v) [expr {$aqacc($i,$v) + [aq_grow $x $aqbase($i,$v)]}]
        }
        if {$aqflow($i,tcp)} {
            # Whole packets these agents delivered (a SYN's header is less
            # than one).
            set b [aq_grow [lindex $cur end] $aqbase($i,bytes_)]
            incr aqacc($i,dpkts) [expr {$b / ($aqflow($i,payload) + $aqflow($i,hdr))}]
        }
    }
    set aqflow($i,agent) ""
    set aqflow($i,sink) ""
}

# New agents for flow i (their counters start at 0).
proc aq_adopt {i s k} {
    global aqflow aqbase
    set aqflow($i,agent) $s
    set aqflow($i,sink) $k
    foreach v [aq_vars $i] { set aqbase($i,$v) 0 }
}

# The window opens: counting starts from the agents' current counters.
proc aq_warmup {} {
    global aq aqbase
    foreach i $aq(flows) {
        set cur [aq_current $i]
        if {[llength $cur]} {
            foreach v [aq_vars $i] x $cur { set aqbase($i,$v) $x }
        }
    }
    foreach g $aq(webgroups) { aq_web_warmup $g }
}

# What flow i counted of v inside the window.
proc aq_diff {i v} {
    global aqacc aqbase aqend
    return [expr {$aqacc($i,$v) + [aq_grow $aqend($i,$v) $aqbase($i,$v)]}]
}

# The counters at the end (a flow without agents has counted nothing since
# its base).
proc aq_read_end {} {
    global aq aqend aqbase
    foreach i $aq(flows) {
        set cur [aq_current $i]
        foreach v [aq_vars $i] {
            set aqend($i,$v) $aqbase($i,$v)
        }
        if {[llength $cur]} {
            foreach v [aq_vars $i] x $cur { set aqend($i,$v) $x }
        }
    }
}

# The old name of the two readings, which bench/ns2/compare.py uses: w
# opens the window, e reads the end (then aq_diff gives the growth).
proc aq_snapshot {tag} {
    if {$tag eq "w"} { aq_warmup } else { aq_read_end }
}
