//go:build linux

package afxdp

import (
	"bytes"
	"errors"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/rfc2544/rfc2544/framing"
)

// needBPF skips the test without root, or where the kernel lacks what err
// says it lacks; any other error fails it.
func needBPF(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Geteuid() != 0 {
		t.Skipf("loading XDP programs needs root (CAP_BPF): %v", err)
	}
	if errors.Is(err, ebpf.ErrNotSupported) || errors.Is(err, ErrNotSupported) && !errors.Is(err, os.ErrPermission) {
		t.Skipf("this kernel lacks XDP: %v", err)
	}
	t.Fatal(err)
}

func testFrame(t *testing.T, src, dst string, vlan, dport uint16, stamp bool) []byte {
	t.Helper()
	cfg := framing.TemplateConfig{
		SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2},
		SrcIP: netip.MustParseAddr(src), DstIP: netip.MustParseAddr(dst), DstPort: dport, VLANID: vlan, FrameSize: 128,
	}
	tpl, err := framing.NewTemplate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, tpl.Len())
	tpl.CopyTo(b)
	if stamp {
		tpl.Stamp(b, framing.Signature{RunID: 1, StreamID: 2, Seq: 3, TxNs: 4})
	}
	return b
}

// TestFilter runs the filter (BPF_PROG_TEST_RUN) with XDP_TX as its match
// action, so the verdict shows which frames it would redirect.
func TestFilter(t *testing.T) {
	match := asm.Instructions{asm.Mov.Imm(asm.R0, xdpTX).WithSymbol("match"), asm.Return()}
	any, err := newProgram(0, match)
	needBPF(t, err)
	defer any.Close()
	port7, err := newProgram(7, match)
	needBPF(t, err)
	defer port7.Close()

	v4 := func(vlan uint16, stamp bool) []byte { return testFrame(t, "198.18.0.1", "198.18.0.2", vlan, 7, stamp) }
	v6 := func(vlan uint16) []byte { return testFrame(t, "2001:2::1", "2001:2::2", vlan, 7, true) }
	mod := func(b []byte, f func([]byte)) []byte { f(b); return b }
	arp := make([]byte, 60)
	arp[12], arp[13] = 0x08, 0x06
	tests := []struct {
		name      string
		frame     []byte
		any, port uint32
	}{
		{"ipv4", v4(0, true), xdpTX, xdpTX},
		{"ipv4 vlan", v4(10, true), xdpTX, xdpTX},
		{"ipv6", v6(0), xdpTX, xdpTX},
		{"ipv6 vlan", v6(10), xdpTX, xdpTX},
		{"other port", testFrame(t, "198.18.0.1", "198.18.0.2", 0, 9, true), xdpTX, xdpPass},
		{"ipv6 other port", testFrame(t, "2001:2::1", "2001:2::2", 0, 9, true), xdpTX, xdpPass},
		{"no marker", v4(0, false), xdpPass, xdpPass},
		{"arp", arp, xdpPass, xdpPass},
		{"fragment", mod(v4(0, true), func(b []byte) { b[14+6] |= 0x20 }), xdpPass, xdpPass},
		{"ipv4 options", mod(v4(0, true), func(b []byte) { b[14] = 0x46 }), xdpPass, xdpPass},
		{"tcp", mod(v4(0, true), func(b []byte) { b[14+9] = 6 }), xdpPass, xdpPass},
		{"truncated", v4(0, true)[:14+20+8], xdpPass, xdpPass},
		{"ethernet header only", v4(0, true)[:14], xdpPass, xdpPass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, p := range []struct {
				prog *ebpf.Program
				want uint32
				what string
			}{{any, tt.any, "any port"}, {port7, tt.port, "port 7"}} {
				got, err := p.prog.Run(&ebpf.RunOptions{Data: tt.frame})
				if err != nil {
					t.Fatalf("%s: run: %v", p.what, err)
				}
				if got != p.want {
					t.Errorf("%s: verdict %d, want %d (2 pass, 3 match)", p.what, got, p.want)
				}
			}
		})
	}
}

// TestProgramLoads checks the verifier takes the program with the stamps
// ProbeStamps says it takes (the plain redirect, StampUser, always), that
// StampAuto takes the first of them and names what it fell back from, that
// a forced stamp the kernel refuses is an ErrNotSupported error naming the
// refusal and the auto default, and that a test frame for a queue without a
// socket goes to the kernel unchanged with every stamp.
func TestProgramLoads(t *testing.T) {
	m, err := newXSKMap(3)
	needBPF(t, err)
	defer m.Close()
	refused, err := ProbeStamps()
	needBPF(t, err)
	t.Logf("stamps the verifier refuses here: %v", refused)
	if why := refused[StampUser]; why != "" {
		t.Fatalf("the plain redirect program (StampUser) is refused: %s", why)
	}
	want := StampUser
	for _, k := range []Stamp{StampHead, StampMeta} {
		if refused[k] == "" {
			want = k
		}
	}
	p, k, fallback, err := loadRedirect(0, m, StampAuto)
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	if k != want || (k == StampMeta) != (fallback == "") {
		t.Errorf("auto loaded the %v stamp with fallback %q; want %v, and a fallback named unless it is metadata", k, fallback, want)
	}
	if k != StampMeta && !strings.Contains(fallback, refused[StampMeta]) {
		t.Errorf("fallback %q does not name the refusal %q", fallback, refused[StampMeta])
	}
	for _, k := range []Stamp{StampMeta, StampHead, StampUser} {
		q, got, fallback, err := loadRedirect(0, m, k)
		if why := refused[k]; why != "" {
			if err == nil || !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), "auto") {
				t.Errorf("forced %v stamp, which the verifier refuses (%s): error %v, want ErrNotSupported naming the refusal and the auto default", k, why, err)
			}
			if q != nil {
				q.Close()
			}
			continue
		}
		if err != nil || got != k || fallback != "" {
			t.Fatalf("forced %v stamp: loaded %v, fallback %q, error %v", k, got, fallback, err)
		}
		in := testFrame(t, "198.18.0.1", "198.18.0.2", 0, 7, true)
		out := make([]byte, len(in)+2*MetaLen)
		opts := &ebpf.RunOptions{Data: in, DataOut: out}
		verdict, err := q.Run(opts)
		q.Close()
		if err != nil {
			t.Fatal(err)
		}
		if verdict != xdpPass {
			t.Errorf("%v stamp: verdict %d with an empty xsk map, want %d (pass)", k, verdict, xdpPass)
		}
		if !bytes.Equal(opts.DataOut, in) {
			t.Errorf("%v stamp: the frame the kernel gets back is %d bytes %x, want it unchanged (%d bytes)", k, len(opts.DataOut), opts.DataOut, len(in))
		}
	}
}
