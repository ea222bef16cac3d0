
# ---------------------------------------------------------------------------
# `web` groups: ns-2's PagePool/WebTraf, one pool per group, in a subclass
# whose methods count and time what the pool does and then hand over to
# WebTraf's own (`next`). The pool asks for its TCP agents through
# alloc-tcp and alloc-tcp-sink, so each group's agents get the group's
# settings and one flow id (the group's, for the packet trace); a request
# runs from launch-req to done-req (its sender has every ACK), the response
# from launch-resp to done-resp, which completes the object.

Class PagePool/WebTraf/Aq -superclass PagePool/WebTraf

# Flow ids are the group's, set when an agent is made; WebTraf keeps them.
PagePool/WebTraf set FID_ASSIGNING_MODE_ 2

PagePool/WebTraf/Aq instproc alloc-tcp {} {
    $self instvar aqg_
    global aqw
    # The settings take effect with a reset (an agent resets itself with
    # the class defaults when it is made).
    set s [aq_sender_$aqg_ $aqw($aqg_,fid)]
    $s reset
    return $s
}

PagePool/WebTraf/Aq instproc alloc-tcp-sink {} {
    $self instvar aqg_
    global aqw
    set k [aq_sink_$aqg_ $aqw($aqg_,fid)]
    $k reset
    return $k
}

PagePool/WebTraf/Aq instproc launch-req {id pid clnt svr ctcp csnk size} {
    $self instvar aqg_
    aq_web_launch $aqg_ $id $pid
    aq_web_open $aqg_ $ctcp $csnk 1
    $self next $id $pid $clnt $svr $ctcp $csnk $size
}

PagePool/WebTraf/Aq instproc done-req {id pid clnt svr ctcp csnk size timer} {
    $self instvar aqg_
    aq_web_close $aqg_ $ctcp
    $self next $id $pid $clnt $svr $ctcp $csnk $size $timer
}

PagePool/WebTraf/Aq instproc launch-resp {id pid svr clnt stcp ssnk size} {
    $self instvar aqg_
    aq_web_open $aqg_ $stcp $ssnk 0
    $self next $id $pid $svr $clnt $stcp $ssnk $size
}

PagePool/WebTraf/Aq instproc done-resp {id pid clnt svr stcp ssnk size sent sent_th {startTime 0} {fid 0}} {
    $self instvar aqg_
    aq_web_close $aqg_ $stcp
    aq_web_object_done $aqg_ $id $pid
    $self next $id $pid $clnt $svr $stcp $ssnk $size $sent $sent_th $startTime $fid
}
