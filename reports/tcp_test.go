package reports

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
)

func tcpResultForTest() rfc2544.TCPResult {
	r := rfc2544.TCPResult{
		Plan:    rfc2544.TCPPlan{BottleneckBps: 100e6, BottleneckSource: "given (--bb)", RTTProbes: 50},
		PathMTU: 1500, MSSBytes: 1448, BaselineRTTNs: 20e6, BaselineMeanNs: 20.1e6, BDPBytes: 250000,
		WindowBytes: 300000, Streams: 1, WindowSource: "1.2 × BDP", MaxBps: 95.64e6, MaxFormula: "BB × MSS / (MTU + 14)",
		ThroughputBps: 94.85e6, PercentOfMax: 99.2, IdealTransferS: 10, ActualTransferS: 10.08, TransferTimeRatio: 1.008,
		EfficiencyPercent: 100, BufferDelayPercent: 73.4,
	}
	for i := range 3 {
		r.Run.Samples = append(r.Run.Samples, trials.TCPSample{AtS: float64(i + 1), Bps: 94e6 + float64(i)*1e6, RTTNs: 34e6 + int64(i)*1e6,
			CwndBytes: 400000, PeerWindowBytes: 524280, RetransBytes: uint64(i)})
	}
	return r
}

// The files of 'rfc2544 tcp --out': the JSON reads back, the CSV has a row
// per sample, the text and the HTML carry the RFC 6349 metrics, and the
// HTML has the throughput and RTT charts.
func TestTCPOutputs(t *testing.T) {
	r := tcpResultForTest()
	out := map[string]string{}
	for _, o := range TCPOutputs(r) {
		var b bytes.Buffer
		if err := o.Write(&b); err != nil {
			t.Fatalf("%s: %v", o.Name, err)
		}
		out[o.Name] = b.String()
	}
	var back rfc2544.TCPResult
	if err := json.Unmarshal([]byte(out["tcp.json"]), &back); err != nil || back.TransferTimeRatio != 1.008 || len(back.Run.Samples) != 3 {
		t.Errorf("tcp.json: %v, read back %+v", err, back)
	}
	rows, err := csv.NewReader(strings.NewReader(out["samples.csv"])).ReadAll()
	if err != nil || len(rows) != 4 || strings.Join(rows[0], ",") != "at_s,bps,rtt_ns,cwnd_bytes,peer_window_bytes,retrans_bytes" ||
		strings.Join(rows[3], ",") != "3,96000000,36000000,400000,524280,2" {
		t.Errorf("samples.csv: %v\n%q", err, rows)
	}
	for _, name := range []string{"report.txt", "report.html"} {
		for _, want := range []string{"TCP transfer time ratio", "1.008", "Buffer delay", "73.4 %", "TCP efficiency", "100.000 %"} {
			if !strings.Contains(out[name], want) {
				t.Errorf("%s lacks %q", name, want)
			}
		}
	}
	html := out["report.html"]
	if n := strings.Count(html, "<svg"); n != 2 || !strings.Contains(html, "TCP throughput during the transfer") || !strings.Contains(html, "RTT during the transfer") {
		t.Errorf("report.html has %d charts, want throughput and RTT over the transfer", n)
	}
	if strings.Contains(html, "<script") || strings.Contains(html, `src="http`) || strings.Contains(html, `href="http`) {
		t.Errorf("report.html fetches or runs something: it must be self-contained")
	}
	// Without samples: no chart, and the table says why.
	r.Run.Samples = nil
	var b bytes.Buffer
	if err := WriteTCPHTML(&b, r); err != nil || strings.Contains(b.String(), "<svg") || !strings.Contains(b.String(), "No samples") {
		t.Errorf("no samples: %v; charts %d, want none and a note", err, strings.Count(b.String(), "<svg"))
	}
}
