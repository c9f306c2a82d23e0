package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/reports"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
)

// autoArgs is a short frame loss run on a temporary lab with no
// --transport: 1518-byte frames at 100 % and 50 % of a 100 Mbit/s line
// (8,127 fps at most), far below what the unshaped kernel DUT (--rate 0,
// not the reference DUT) forwards, so every frame sent arrives.
func autoArgs(out string) []string {
	return []string{"loss", "--lab", "--rate", "0", "--sizes", "1518", "--duration", "1s", "--loss-step", "50", "--line-rate", "100mbit",
		"--settle", "100ms", "--out", out}
}

// autoRun runs autoArgs and returns its results and journal header, failing
// the test on any error.
func autoRun(t *testing.T) (*rfc2544.Results, rfc2544.JournalHeader, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	_, stderr, err := runCLI(t, context.Background(), autoArgs(out)...)
	defer labGone(t, tempLabName())
	if err != nil {
		t.Fatalf("run: %v (exit %d)\nstderr:\n%s", err, exitCode(err, io.Discard), stderr)
	}
	res, err := reports.ReadResultsFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	jc, err := rfc2544.ReadJournal(filepath.Join(out, journalName))
	if err != nil {
		t.Fatal(err)
	}
	// Exact counts: every point measured, every frame the generator sent
	// accounted for, and (so far below the DUT's capacity) none lost.
	if len(res.FrameLoss) != 1 || len(res.FrameLoss[0].Points) == 0 {
		t.Fatalf("frame loss results %+v: want one size with points", res.FrameLoss)
	}
	for _, p := range res.FrameLoss[0].Points {
		if p.TesterLimited || p.LossPercent != 0 {
			t.Errorf("at %.0f fps: loss %.3f %%, tester-limited %v; want every frame through", p.OfferedFPS, p.LossPercent, p.TesterLimited)
		}
	}
	return res, jc.Header, stderr
}

// autoExpect is what --transport auto must choose on this kernel, as the
// probe finds it: xdp with the first receive stamp it loads, or raw when
// it loads none.
func autoExpect(t *testing.T) (transport, stamp string) {
	p, err := trials.ProbeXDP()
	if err != nil || p.Stamp == "" {
		t.Logf("the kernel runs no xdp program variant (%v, %+v): auto must choose raw", err, p)
		return transportRaw, ""
	}
	return transportXDP, p.Stamp
}

// TestRunAutoTransport: a run with no --transport on a lab takes the
// fastest transport the kernel runs (xdp where its program loads, with the
// receive stamp the probe found), and the results, the journal and the
// log say which ran and why.
func TestRunAutoTransport(t *testing.T) {
	needRoot(t)
	want, stamp := autoExpect(t)
	res, hdr, stderr := autoRun(t)
	if res.Tester.Transport != want || hdr.Transport != want {
		t.Errorf("transport %q (journal %q), want %q", res.Tester.Transport, hdr.Transport, want)
	}
	if !strings.HasPrefix(res.Tester.TransportWhy, "auto: ") {
		t.Errorf("transport_why %q: want auto's reason", res.Tester.TransportWhy)
	}
	if want == transportXDP {
		if ts := "kernel-xdp-" + map[string]string{"metadata": "meta", "head": "head"}[stamp]; stamp != "user" && res.Tester.Paths.Timestamps != ts {
			t.Errorf("receive timestamps %q, want %q (the probe's stamp %q)", res.Tester.Paths.Timestamps, ts, stamp)
		}
		if !strings.Contains(res.Tester.TransportWhy, fmt.Sprintf("%q", stamp)) {
			t.Errorf("transport_why %q does not name the stamp %q", res.Tester.TransportWhy, stamp)
		}
	}
	if line := "transport " + want + ", chosen by auto: "; !strings.Contains(stderr, line) {
		t.Errorf("the log does not say %q:\n%s", line, stderr)
	}
	var txt strings.Builder
	if err := reports.WriteTables(&txt, res); err != nil {
		t.Fatal(err)
	}
	if line := "transport " + want + " (auto: "; !strings.Contains(txt.String(), line) {
		t.Errorf("the report does not say %q:\n%s", line, txt.String())
	}
}

// TestRunAutoFallsBackToRaw: when auto chose xdp and the xdp engine cannot
// open on the ports (ErrNotSupported, as a driver without XDP gives), the
// run goes on raw and says why; with --transport xdp given, the same
// failure ends the run before any traffic, naming the flag.
func TestRunAutoFallsBackToRaw(t *testing.T) {
	needRoot(t)
	orig := openXDPEngine
	t.Cleanup(func() { openXDPEngine = orig })
	opened := 0
	openXDPEngine = func(ctx context.Context, cfg trials.Config) (engine, error) {
		opened++
		return nil, fmt.Errorf("port a: %w: injected: this driver has no XDP", trials.ErrNotSupported)
	}
	want, _ := autoExpect(t)
	res, hdr, stderr := autoRun(t)
	if res.Tester.Transport != transportRaw || res.Tester.Paths.Transport != transportRaw {
		t.Errorf("transport %q (paths %q), want raw", res.Tester.Transport, res.Tester.Paths.Transport)
	}
	if want == transportXDP {
		if opened != 1 || !strings.Contains(res.Tester.TransportWhy, "does not open") || !strings.Contains(res.Tester.TransportWhy, "injected") {
			t.Errorf("xdp opened %d times, transport_why %q: want one try and its error", opened, res.Tester.TransportWhy)
		}
		if hdr.Transport != transportXDP {
			t.Errorf("journal transport %q: want the choice, xdp (a resume tries it again)", hdr.Transport)
		}
		if !strings.Contains(stderr, "transport raw, chosen by auto: the xdp transport does not open") {
			t.Errorf("the log does not say why raw ran:\n%s", stderr)
		}
	}

	opened = 0
	_, stderr, err := runCLI(t, context.Background(), append(autoArgs(filepath.Join(t.TempDir(), "out")), "--transport", "xdp")...)
	labGone(t, tempLabName())
	if err == nil || !strings.Contains(err.Error(), "--transport xdp") || !errors.Is(err, trials.ErrNotSupported) || exitCode(err, io.Discard) != exitTestError {
		t.Errorf("--transport xdp with xdp unavailable: %v; want the engine's error naming --transport xdp, exit %d\nstderr:\n%s", err, exitTestError, stderr)
	}
	if opened != 1 || strings.Contains(stderr, "transport raw") {
		t.Errorf("xdp opened %d times; stderr:\n%s\nwant one try and no fallback", opened, stderr)
	}
}
