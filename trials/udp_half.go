package trials

// withDefaults fills in the documented defaults of p's zero fields.
func (c RemotePort) withDefaults() RemotePort {
	if c.SocketBuffer <= 0 {
		c.SocketBuffer = DefaultUDPSocketBuffer
	}
	if c.Batch <= 0 || c.Batch > udpMaxBatch {
		c.Batch = udpMaxBatch
	}
	c.TesterLimitTolerance, c.MaxLag = limitDefaults(c.TesterLimitTolerance, c.MaxLag)
	return c
}

// udpReceiveResult is what a udpReceive counted.
type udpReceiveResult struct {
	// Streams holds the receive counters of each counted stream (in the
	// order given to startUDPReceive): Received, Lost, Reordered,
	// Duplicate, Late, LastLossNs, latency; Sent is what the sender
	// reported (Stop's sent).
	Streams []StreamResult
	// Reflected counts frames sent back to RemoteReceive.Reflect.
	Reflected uint64
	// KernelDrops counts datagrams the socket dropped in the kernel.
	KernelDrops uint64
	// Paths are the kernel paths used.
	Paths Paths
}

// udpSendResult is what a udpSend sent.
type udpSendResult struct {
	// Streams holds the send counters of each stream (Sent, IntendedFPS,
	// OfferedFPS, TxSeconds, MaxLagNs), in the order given.
	Streams []StreamResult
	// TesterLimitReason, when not empty, says why the generator fell
	// short of the intended load.
	TesterLimitReason string
	// TesterLimitTransient says every reason is a stall of the host
	// (Result.TesterLimitTransient).
	TesterLimitTransient bool
	// Paths are the kernel paths used.
	Paths Paths
}
