package rig

import (
	"fmt"
	"os"
	"strings"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/internal/afxdp"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
)

// Auto is the transport chosen for the ports and the kernel (Choose): xdp
// where AF_XDP runs, raw where it does not, udp where the tester has no
// layer-2 access. It is the default.
const Auto = "auto"

// Choice is the transport a run uses and why.
type Choice struct {
	Transport string // Raw, UDP, XDP or Sim
	// Why says how it was chosen: "--transport xdp" when given, else what
	// --transport auto found.
	Why string
	// Auto is set when --transport auto chose: an xdp engine that cannot
	// open on the ports falls back to raw (Open), saying why.
	Auto bool
}

// ChooseInput is what the choice of a transport depends on.
type ChooseInput struct {
	Placement Placement
	Plan      rfc2544.Plan // its frame sizes and mixes
	// Calibration is the transport a --calibration file was measured on
	// ("" without one): a run takes the ceilings of its own transport.
	Calibration string
	Queues      int // --queues (0 or 1: one)
	// ProbeXDP replaces trials.ProbeXDP (tests); Root replaces the
	// process's effective user id check.
	ProbeXDP func() (trials.XDPProbe, error)
	Root     func() bool
}

// Choose resolves --transport auto: the udp transport between two
// addresses or without root (AF_PACKET and AF_XDP need CAP_NET_RAW); the
// raw transport for frames larger than the xdp transport carries or when
// the kernel will not load the xdp program; else xdp, the fastest. A
// --calibration file's transport is taken as given. Any other transport
// is returned as given.
func Choose(in ChooseInput) (Choice, error) {
	pl := in.Placement
	if pl.Agent != nil {
		return Choice{Transport: UDP, Why: "a remote agent's tester runs on udp"}, nil
	}
	if pl.Transport != Auto {
		return Choice{Transport: pl.Transport, Why: "--transport " + pl.Transport}, nil
	}
	probe, root := in.ProbeXDP, in.Root
	if probe == nil {
		probe = trials.ProbeXDP
	}
	if root == nil {
		root = func() bool { return os.Geteuid() == 0 }
	}
	c := Choice{Auto: true}
	pick := func(t, why string, args ...any) (Choice, error) {
		c.Transport, c.Why = t, "auto: "+fmt.Sprintf(why, args...)
		if in.Queues > 1 && t != XDP {
			return c, inputf("--queues %d: only the xdp transport sends on several queues, and --transport auto chose %s (%s); drop --queues", in.Queues, t, c.Why)
		}
		return c, nil
	}
	if len(pl.Ports) == 2 && pl.Ports[0].SocketOnly && pl.Ports[1].SocketOnly {
		return pick(UDP, "the ports are addresses, no interfaces: kernel UDP sockets")
	}
	if !root() {
		return pick(UDP, "not root: AF_PACKET and AF_XDP need CAP_NET_RAW, kernel UDP sockets do not")
	}
	switch in.Calibration {
	case "":
	case Raw, XDP:
		c.Auto = false // the ceilings are of that transport: no fallback
		return pick(in.Calibration, "the --calibration file was measured on the %s transport", in.Calibration)
	default:
		return c, inputf("--calibration: ceilings of the %s transport; a run takes raw or xdp ceilings", quote(in.Calibration))
	}
	if big, m := largestFrame(in.Plan), afxdp.MaxFrameSize(afxdp.DefaultChunkSize); big > m {
		return pick(Raw, "%d-byte frames: the xdp transport carries at most %d (one %d-byte UMEM chunk)", big, m, afxdp.DefaultChunkSize)
	}
	p, err := probe()
	if err != nil {
		return pick(Raw, "the kernel does not run the xdp transport here: %v", err)
	}
	if p.Stamp == "" {
		return pick(Raw, "the kernel refuses every xdp program variant: %s", refusals(p.Refused))
	}
	if len(p.Refused) > 0 {
		return pick(XDP, "the kernel loads the xdp program, receive times stamped %q (%s)", p.Stamp, refusals(p.Refused))
	}
	return pick(XDP, "the kernel loads the xdp program, receive times stamped %q", p.Stamp)
}

// largestFrame is the plan's largest frame in bytes, mixes included.
func largestFrame(p rfc2544.Plan) int {
	big := 0
	for _, f := range p.FrameSizes {
		big = max(big, framing.LargestFrame(f))
	}
	for _, m := range p.Mixes {
		big = max(big, m.Largest())
	}
	return big
}

// refusals lists a probe's refused variants, sorted by name.
func refusals(r map[string]string) string {
	var s []string
	for _, k := range []string{"metadata", "head", "user"} {
		if why, ok := r[k]; ok {
			s = append(s, k+" refused: "+why)
		}
	}
	return strings.Join(s, "; ")
}
