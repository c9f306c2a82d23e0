package rig

import (
	"flag"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/lab"
)

// TestCheckQueues: --queues is refused before anything runs when it is
// below 1, above 1 on a transport with one queue, or above the CPUs, each
// error naming --queues and the fix.
func TestCheckQueues(t *testing.T) {
	for _, c := range []struct {
		n         int
		transport string
		cpus      int
		want      string // "" = accepted
	}{
		{1, Raw, 2, ""}, {1, UDP, 2, ""}, {2, XDP, 2, ""}, {4, XDP, 8, ""},
		{0, XDP, 2, "1 or more"}, {-1, Raw, 2, "1 or more"},
		{2, Raw, 2, "add --transport xdp"}, {2, UDP, 8, "add --transport xdp"},
		{3, XDP, 2, "at most --queues 2"},
	} {
		err := CheckQueues(c.n, c.transport, c.cpus)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("--queues %d on %s, %d CPUs: %v; want accepted", c.n, c.transport, c.cpus, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), "--queues") || !strings.Contains(err.Error(), c.want)):
			t.Errorf("--queues %d on %s, %d CPUs: %v; want refused naming --queues and %q", c.n, c.transport, c.cpus, err, c.want)
		}
	}
}

// TestQueuesMakeTheTempLab: --queues 2 with --transport xdp on a temporary
// lab gives its veths two queues.
func TestQueuesMakeTheTempLab(t *testing.T) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	f := AddFlags(fs)
	if err := fs.Parse(FixLabArg([]string{"--lab", "--transport", "xdp", "--queues", "2"})); err != nil {
		t.Fatal(err)
	}
	pl, err := f.Place(false, nil, func() (lab.Config, error) { return lab.Config{Name: "tmp-q"}, nil })
	if err != nil {
		t.Fatal(err)
	}
	if pl.TempLab == nil || pl.TempLab.Queues != 2 || f.Queues() != 2 {
		t.Errorf("placement %+v, queues %d: want a temporary lab with 2 queues per veth", pl, f.Queues())
	}
}
