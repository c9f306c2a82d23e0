package reports

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/rfc2544"
)

// A saved results file holding a custom mix this process never saw (its
// name drawn at test time, so nothing registered it): reading it registers
// the mix from the file's plan.mixes, and the tables, the frame loss rows
// per size and a comparison name it without the original flags. A file
// whose plan.mixes lacks the mix is refused, naming the field.
func TestReadResultsCustomMix(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 3))
	name := fmt.Sprintf("saved%d", rng.Uint32())
	mix := framing.Mix{Name: name, Parts: []framing.MixPart{{Size: 64, Weight: 7}, {Size: 570, Weight: 4}, {Size: 1518, Weight: 1}}}
	code := framing.MixCode(mix)
	t.Logf("seed %d: mix %s, code %d", seed, name, code)
	if _, ok := framing.MixOf(code); ok {
		t.Fatalf("mix %s registered before the file was read", name)
	}
	p, err := rfc2544.DefaultPlan(rfc2544.ProfileQuick)
	if err != nil {
		t.Fatal(err)
	}
	p.LinkBps, p.Tests, p.FrameSizes, p.Mixes = 1e9, []rfc2544.Test{rfc2544.TestFrameLoss}, []int{64, code}, []framing.Mix{mix}
	res := &rfc2544.Results{Tool: "test", Started: time.Unix(0, 0).UTC(), Finished: time.Unix(60, 0).UTC(), Plan: p,
		Tester: rfc2544.TesterInfo{Transport: "raw"},
		FrameLoss: []rfc2544.FrameLossResult{{FrameSize: code, Points: []rfc2544.FrameLossPoint{{
			IntendedPercent: 10, OfferedPercent: 10, OfferedFPS: 33437, Sent: 1200, Received: 800, LossPercent: 33.33,
			Sizes: []rfc2544.SizeLoss{{FrameSize: 64, Sent: 700, Received: 700}, {FrameSize: 570, Sent: 400, Received: 0, LossPercent: 100},
				{FrameSize: 1518, Sent: 100, Received: 100}},
		}}}},
	}
	var file bytes.Buffer
	if err := WriteJSON(&file, res); err != nil {
		t.Fatal(err)
	}
	if _, ok := framing.MixOf(code); ok {
		t.Fatalf("writing the file registered the mix")
	}
	// Without its definition: refused.
	bad := strings.Replace(file.String(), `"mixes"`, `"mixes_gone"`, 1)
	if _, err := ReadResults(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "plan.mixes") {
		t.Errorf("file without plan.mixes: %v, want an error naming plan.mixes", err)
	} else {
		t.Logf("%v", err)
	}
	got, err := ReadResults(bytes.NewReader(file.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if framing.SizeName(code) != name {
		t.Fatalf("after reading: SizeName(%d) = %q, want %q", code, framing.SizeName(code), name)
	}
	var text bytes.Buffer
	if err := WriteTables(&text, got); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{name + ": 64", name + ": 570", name + ": 1518"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("frame loss table lacks the row %q:\n%s", want, text.String())
		}
	}
	if strings.Contains(text.String(), fmt.Sprint(code)) {
		t.Errorf("the report shows the mix's code %d", code)
	}
	// The 570 B row carries the loss, the others none (the loss is the
	// row's last column: the note is empty).
	want := map[string]string{name + ": 64": "0.000", name + ": 570": "100.000", name + ": 1518": "0.000"}
	for _, line := range strings.Split(text.String(), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		if w, ok := want[f[0]+" "+f[1]]; ok {
			if f[len(f)-1] != w {
				t.Errorf("row %q: loss %s, want %s", line, f[len(f)-1], w)
			}
			delete(want, f[0]+" "+f[1])
		}
	}
	if len(want) > 0 {
		t.Errorf("rows missing: %v", want)
	}
	// The CSV: the point's row, then a row per size with its own counts
	// and the size in sizes.frame_size.
	var csvOut bytes.Buffer
	if err := WriteCSV(&csvOut, got, TableFrameLoss); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&csvOut).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	wantRows := [][]string{
		{"frame_size", "intended_percent", "offered_percent", "offered_fps", "sent", "received", "loss_percent", "tester_limited", "skipped", "sizes.frame_size"},
		{name, "10", "10", "33437", "1200", "800", "33.33", "false", "", ""},
		{name, "10", "10", "", "700", "700", "0", "", "", "64"},
		{name, "10", "10", "", "400", "0", "100", "", "", "570"},
		{name, "10", "10", "", "100", "100", "0", "", "", "1518"},
	}
	if !slices.EqualFunc(rows, wantRows, slices.Equal) {
		t.Errorf("frame loss CSV:\n%q\nwant\n%q", rows, wantRows)
	}
	var cmp bytes.Buffer
	if err := WriteComparison(&cmp, Compare(got, got)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cmp.String(), name) {
		t.Errorf("comparison does not name the mix:\n%s", cmp.String())
	}
}
