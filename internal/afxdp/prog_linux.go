//go:build linux

package afxdp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/rlimit"
	"github.com/rfc2544/rfc2544/framing"
)

// XDP return codes and the program's metadata magic ("XDPT").
const (
	xdpPass   = 2
	xdpTX     = 3
	metaMagic = 0x54504458
)

// struct xdp_md offsets.
const (
	mdData     = 0
	mdDataEnd  = 4
	mdDataMeta = 8
	mdRxQueue  = 16
)

// ne16 is the value a native-endian 16-bit load yields for the network-order
// (big-endian) value v: BPF loads in the CPU's byte order.
func ne16(v uint16) int32 {
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], v)
	return int32(binary.NativeEndian.Uint16(b[:]))
}

// filterInsns is the test-frame filter: it passes to the kernel (XDP_PASS)
// every frame that is not Ethernet II [+ one 802.1Q tag] + IPv4 without
// options and not fragmented, or IPv6 without extension headers, + UDP (to
// dstPort when it is non-zero) whose payload starts with the signature
// marker; a test frame continues at the label "match" with the context in R6.
// Our templates never carry IPv4 options (framing builds IHL 5), so a frame
// with options is foreign here even if it could be a test frame.
func filterInsns(dstPort uint16) asm.Instructions {
	const pass = "pass"
	in := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.LoadMem(asm.R2, asm.R6, mdData, asm.Word),
		asm.LoadMem(asm.R3, asm.R6, mdDataEnd, asm.Word),
		asm.Mov.Reg(asm.R4, asm.R2),
		asm.Add.Imm(asm.R4, framing.EthHeaderLen),
		asm.JGT.Reg(asm.R4, asm.R3, pass),
		asm.LoadMem(asm.R5, asm.R2, 12, asm.Half),
		asm.JEq.Imm(asm.R5, ne16(0x0800), "v4_14"),
		asm.JEq.Imm(asm.R5, ne16(0x86DD), "v6_14"),
		asm.JNE.Imm(asm.R5, ne16(0x8100), pass),
		asm.Mov.Reg(asm.R4, asm.R2),
		asm.Add.Imm(asm.R4, framing.EthHeaderLen+framing.VLANTagLen),
		asm.JGT.Reg(asm.R4, asm.R3, pass),
		asm.LoadMem(asm.R5, asm.R2, 16, asm.Half),
		asm.JEq.Imm(asm.R5, ne16(0x0800), "v4_18"),
		asm.JEq.Imm(asm.R5, ne16(0x86DD), "v6_18"),
		asm.Ja.Label(pass),
	}
	port := func(off int16) asm.Instructions {
		if dstPort == 0 {
			return nil
		}
		return asm.Instructions{
			asm.LoadMem(asm.R5, asm.R2, off, asm.Half),
			asm.JNE.Imm(asm.R5, ne16(dstPort), pass),
		}
	}
	for _, l2 := range []int16{framing.EthHeaderLen, framing.EthHeaderLen + framing.VLANTagLen} {
		// IPv4: version 4 and IHL 5, protocol UDP, no MF, offset 0.
		udp := l2 + framing.IPv4HeaderLen
		v4 := asm.Instructions{
			asm.Mov.Reg(asm.R4, asm.R2).WithSymbol(label("v4", l2)),
			asm.Add.Imm(asm.R4, int32(udp+framing.UDPHeaderLen+1)),
			asm.JGT.Reg(asm.R4, asm.R3, pass),
			asm.LoadMem(asm.R5, asm.R2, l2, asm.Byte),
			asm.JNE.Imm(asm.R5, 0x45, pass),
			asm.LoadMem(asm.R5, asm.R2, l2+9, asm.Byte),
			asm.JNE.Imm(asm.R5, 17, pass),
			asm.LoadMem(asm.R5, asm.R2, l2+6, asm.Half),
			asm.And.Imm(asm.R5, ne16(0x3FFF)),
			asm.JNE.Imm(asm.R5, 0, pass),
		}
		v4 = append(v4, port(udp+2)...)
		v4 = append(v4,
			asm.LoadMem(asm.R5, asm.R2, udp+framing.UDPHeaderLen, asm.Byte),
			asm.JNE.Imm(asm.R5, framing.SignatureMarker, pass),
			asm.Ja.Label("match"),
		)
		// IPv6: version 6, next header UDP.
		udp = l2 + framing.IPv6HeaderLen
		v6 := asm.Instructions{
			asm.Mov.Reg(asm.R4, asm.R2).WithSymbol(label("v6", l2)),
			asm.Add.Imm(asm.R4, int32(udp+framing.UDPHeaderLen+1)),
			asm.JGT.Reg(asm.R4, asm.R3, pass),
			asm.LoadMem(asm.R5, asm.R2, l2, asm.Byte),
			asm.RSh.Imm(asm.R5, 4),
			asm.JNE.Imm(asm.R5, 6, pass),
			asm.LoadMem(asm.R5, asm.R2, l2+6, asm.Byte),
			asm.JNE.Imm(asm.R5, 17, pass),
		}
		v6 = append(v6, port(udp+2)...)
		v6 = append(v6,
			asm.LoadMem(asm.R5, asm.R2, udp+framing.UDPHeaderLen, asm.Byte),
			asm.JNE.Imm(asm.R5, framing.SignatureMarker, pass),
			asm.Ja.Label("match"),
		)
		in = append(in, v4...)
		in = append(in, v6...)
	}
	in = append(in,
		asm.Mov.Imm(asm.R0, xdpPass).WithSymbol(pass),
		asm.Return(),
	)
	return in
}

func label(p string, l2 int16) string {
	if l2 == framing.EthHeaderLen {
		return p + "_14"
	}
	return p + "_18"
}

// redirectInsns is the "match" tail of the real program: it stamps the
// frame as k says (StampMeta, StampHead; nothing for StampUser), then
// redirects it to the socket in xsks at the frame's receive queue, passing
// it to the kernel if there is none. With StampHead it looks the socket up
// first, so a frame the kernel gets back is never prepended to.
func redirectInsns(xsks *ebpf.Map, k Stamp) asm.Instructions {
	var in asm.Instructions
	switch k {
	case StampMeta:
		in = append(room("match", asm.FnXdpAdjustMeta),
			asm.LoadMem(asm.R2, asm.R6, mdDataMeta, asm.Word),
			asm.LoadMem(asm.R3, asm.R6, mdData, asm.Word),
		)
	case StampHead:
		in = asm.Instructions{
			asm.LoadMem(asm.R2, asm.R6, mdRxQueue, asm.Word).WithSymbol("match"),
			asm.StoreMem(asm.RFP, -4, asm.R2, asm.Word),
			asm.Mov.Reg(asm.R2, asm.RFP),
			asm.Add.Imm(asm.R2, -4),
			asm.LoadMapPtr(asm.R1, xsks.FD()),
			asm.FnMapLookupElem.Call(),
			asm.JNE.Imm(asm.R0, 0, "stamp"),
			asm.Mov.Imm(asm.R0, xdpPass),
			asm.Return(),
		}
		in = append(in, room("stamp", asm.FnXdpAdjustHead)...)
		in = append(in,
			asm.LoadMem(asm.R2, asm.R6, mdData, asm.Word),
			asm.LoadMem(asm.R3, asm.R6, mdDataEnd, asm.Word),
		)
	default:
		in = asm.Instructions{asm.LoadMapPtr(asm.R1, xsks.FD()).WithSymbol("match")}
	}
	if k == StampMeta || k == StampHead {
		// R2 is where the stamp goes, R3 what it must end before.
		in = append(in,
			asm.Mov.Reg(asm.R4, asm.R2),
			asm.Add.Imm(asm.R4, MetaLen),
			asm.JGT.Reg(asm.R4, asm.R3, "redirect"),
			asm.StoreMem(asm.R2, 0, asm.R8, asm.DWord),
			asm.StoreImm(asm.R2, 8, metaMagic, asm.Word),
			asm.StoreImm(asm.R2, 12, 0, asm.Word),
			asm.LoadMapPtr(asm.R1, xsks.FD()).WithSymbol("redirect"),
		)
	}
	return append(in,
		asm.LoadMem(asm.R2, asm.R6, mdRxQueue, asm.Word),
		asm.Mov.Imm(asm.R3, xdpPass), // the action when the queue has no socket
		asm.FnRedirectMap.Call(),
		asm.Return(),
	)
}

// room, at label sym, reads the kernel's clock into R8 and makes MetaLen
// bytes of room with adjust (bpf_xdp_adjust_meta or _head), going to
// "redirect" unstamped when the driver has none.
func room(sym string, adjust asm.BuiltinFunc) asm.Instructions {
	return asm.Instructions{
		asm.FnKtimeGetNs.Call().WithSymbol(sym),
		asm.Mov.Reg(asm.R8, asm.R0),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.Mov.Imm(asm.R2, -MetaLen),
		adjust.Call(),
		asm.JNE.Imm(asm.R0, 0, "redirect"),
	}
}

// loadRedirect loads the filter with the redirect tail stamping as want
// says; StampAuto tries StampMeta, StampHead and StampUser in turn, the
// first the verifier takes. It returns the stamp loaded and, when that is
// not the first choice, what the kernel refused (fallback). A forced stamp
// the kernel refuses, or a kernel that refuses every one, is an error that
// wraps ErrNotSupported and names the refusal.
func loadRedirect(dstPort uint16, xsks *ebpf.Map, want Stamp) (_ *ebpf.Program, got Stamp, fallback string, _ error) {
	try := []Stamp{want}
	if want == StampAuto {
		try = []Stamp{StampMeta, StampHead, StampUser}
	}
	var refused []string
	for _, k := range try {
		p, err := newProgram(dstPort, redirectInsns(xsks, k))
		if err == nil {
			return p, k, strings.Join(refused, "; "), nil
		}
		why, ok := verifierRefusal(err)
		if !ok {
			return nil, 0, "", err // not the verifier: no other stamp will do
		}
		refused = append(refused, fmt.Sprintf("the verifier refused the %v stamp: %s", k, why))
	}
	if want != StampAuto {
		return nil, 0, "", notSupported("load the xdp program: %s; the default receive stamp (auto) takes one the kernel has", refused[0])
	}
	return nil, 0, "", notSupported("load the xdp program: %s", strings.Join(refused, "; "))
}

// ProbeStamps loads the XDP program once with each stamp (StampMeta,
// StampHead, StampUser) and unloads it; refused maps each stamp the
// verifier refuses to its reason. err is set when no program could be
// tried at all (no BPF, no privilege: it wraps ErrNotSupported then).
func ProbeStamps() (refused map[Stamp]string, err error) {
	if err := rlimit.RemoveMemlock(); err != nil {
		return nil, notSupported("raise RLIMIT_MEMLOCK for the XDP program: %v: run as root or raise ulimit -l", err)
	}
	m, err := newXSKMap(1)
	if err != nil {
		return nil, classifyBPF("create xsk map", err)
	}
	defer m.Close()
	refused = map[Stamp]string{}
	for _, k := range []Stamp{StampMeta, StampHead, StampUser} {
		p, err := newProgram(0, redirectInsns(m, k))
		if err == nil {
			p.Close()
			continue
		}
		why, ok := verifierRefusal(err)
		if !ok {
			return nil, classifyBPF("load xdp program", err)
		}
		refused[k] = why
	}
	return refused, nil
}

// verifierRefusal says whether err is the verifier refusing a program a
// helper function it calls, and which, in the verifier's own line (e.g.
// "program of this type cannot use helper bpf_xdp_adjust_meta#54"). Any
// other verifier error is a fault of the program, not of the kernel.
func verifierRefusal(err error) (string, bool) {
	var ve *ebpf.VerifierError
	if !errors.As(err, &ve) {
		return "", false
	}
	for _, l := range ve.Log {
		if strings.Contains(l, "cannot use helper") || strings.Contains(l, "unknown func") || strings.Contains(l, "invalid func") {
			return strings.TrimSpace(l), true
		}
	}
	return "", false
}

// newXSKMap creates the map from queue id to socket, with room for queue
// ids below entries.
func newXSKMap(entries int) (*ebpf.Map, error) {
	return ebpf.NewMap(&ebpf.MapSpec{
		Name:       "rfc2544_xsks",
		Type:       ebpf.XSKMap,
		KeySize:    4,
		ValueSize:  4,
		MaxEntries: uint32(entries),
	})
}

// newProgram loads the XDP program: the filter, then tail.
func newProgram(dstPort uint16, tail asm.Instructions) (*ebpf.Program, error) {
	insns := append(filterInsns(dstPort), tail...)
	return ebpf.NewProgram(&ebpf.ProgramSpec{
		Name:         "rfc2544_xsk",
		Type:         ebpf.XDP,
		License:      "Dual BSD/GPL",
		Instructions: insns,
	})
}
