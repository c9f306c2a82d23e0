package trials

// LatencySummary is the all-frame latency of a stream (RFC 2544 §26.2 plus
// RFC 5481 delay variation). Values are nanoseconds; zero Count means no frame
// was timed and every other field is meaningless.
type LatencySummary struct {
	Count  uint64  `json:"count"`
	MinNs  int64   `json:"min_ns"`
	MeanNs float64 `json:"mean_ns"`
	MaxNs  int64   `json:"max_ns"`
	P50Ns  int64   `json:"p50_ns"`
	P90Ns  int64   `json:"p90_ns"`
	P99Ns  int64   `json:"p99_ns"`
	P999Ns int64   `json:"p99_9_ns"`
	// PDVP999Ns is the 99.9th percentile of packet delay variation,
	// D(i) − D_min (RFC 5481 §4.2).
	PDVP999Ns int64 `json:"pdv_p99_9_ns"`
	// IPDVMeanAbsNs and IPDVMaxAbsNs summarize inter-packet delay
	// variation D(i) − D(i−1) over consecutive sequence numbers (RFC 5481 §4.1).
	IPDVMeanAbsNs float64 `json:"ipdv_mean_abs_ns"`
	IPDVMaxAbsNs  int64   `json:"ipdv_max_abs_ns"`
	// JitterNs is the RFC 3550 interarrival jitter estimate, J += (|IPDV|−J)/16.
	JitterNs float64 `json:"jitter_ns"`
	// Buckets is a compact view of the distribution for CDF charts: each
	// bucket's upper value and the count at or below it, increasing.
	Buckets []LatencyBucket `json:"buckets,omitempty"`
	// HDR is the whole latency histogram (1 ns to 100 s, 3 significant
	// digits) in the HdrHistogram V2 compressed format, base64: summaries
	// merge exactly with hdrhistogram's Merge (rfc2544.MergeLatency).
	HDR string `json:"hdr,omitempty"`
}

// LatencyBucket is one point of a cumulative latency distribution.
type LatencyBucket struct {
	UpToNs     int64  `json:"up_to_ns"`
	Cumulative uint64 `json:"cumulative"`
}
