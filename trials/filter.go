package trials

import (
	"fmt"

	"golang.org/x/net/bpf"
)

// rxSnapLen is how many bytes of a test frame the receive filter keeps:
// Ethernet (with one VLAN tag), IPv6, UDP and the signature fit.
const rxSnapLen = 128

// sigMagic is the first byte of every test signature (package framing).
const sigMagic = 0xC5

// receiveFilter is the classic BPF program of a receiving port: it accepts
// ARP and IPv6 neighbor solicitations and advertisements (learning, and
// answering the DUT) and IPv4/UDP or IPv6/UDP frames whose payload starts
// with the signature marker and runID, truncated to rxSnapLen, and drops
// everything else in the kernel. runID 0 accepts only ARP and ND (the idle
// filter).
func receiveFilter(runID uint8) ([]bpf.RawInstruction, error) {
	want := uint32(sigMagic)<<8 | uint32(runID)
	var p prog
	p.add("", bpf.LoadAbsolute{Off: 12, Size: 2})
	p.jeq(etherTypeARP, "accept", "")
	p.jeq(etherTypeIPv4, "", "ipv6")
	// IPv4: UDP, not a fragment, payload at 14 + IHL*4 + 8.
	p.add("", bpf.LoadAbsolute{Off: 23, Size: 1})
	p.jeq(17, "", "drop")
	p.add("", bpf.LoadAbsolute{Off: 20, Size: 2})
	p.jset(0x1fff, "drop", "")
	p.add("", bpf.LoadMemShift{Off: 14})
	p.jmp("sig")
	// IPv6: UDP (payload at 14 + 40 + 8), or ICMPv6 NS/NA.
	p.add("ipv6", bpf.JumpIf{Cond: bpf.JumpEqual, Val: etherTypeIPv6})
	p.fix(len(p.insns)-1, "", "drop")
	p.add("", bpf.LoadAbsolute{Off: 20, Size: 1})
	p.jeq(17, "udp6", "")
	p.jeq(ipProtoICMPv6, "", "drop")
	p.add("", bpf.LoadAbsolute{Off: 54, Size: 1})
	p.jeq(ndSolicit, "accept", "")
	p.jeq(ndAdvert, "accept", "drop")
	p.add("udp6", bpf.LoadConstant{Dst: bpf.RegX, Val: 40})
	p.add("sig", bpf.LoadIndirect{Off: 14 + 8, Size: 2})
	if runID == 0 {
		p.jmp("drop")
	} else {
		p.jeq(want, "accept", "drop")
	}
	p.add("accept", bpf.RetConstant{Val: rxSnapLen})
	p.add("drop", bpf.RetConstant{Val: 0})
	insns, err := p.resolve()
	if err != nil {
		return nil, fmt.Errorf("assemble receive filter: %w", err)
	}
	raw, err := bpf.Assemble(insns)
	if err != nil {
		return nil, fmt.Errorf("assemble receive filter: %w", err)
	}
	return raw, nil
}

// prog is a tiny assembler for classic BPF with forward jumps to labels.
type prog struct {
	insns  []bpf.Instruction
	labels map[string]int
	jumps  []pending
}

type pending struct {
	at          int
	true, false string // "" = next instruction
}

func (p *prog) add(label string, in bpf.Instruction) {
	if label != "" {
		if p.labels == nil {
			p.labels = map[string]int{}
		}
		p.labels[label] = len(p.insns)
	}
	p.insns = append(p.insns, in)
}

func (p *prog) fix(at int, t, f string) { p.jumps = append(p.jumps, pending{at, t, f}) }

func (p *prog) jeq(v uint32, t, f string) {
	p.add("", bpf.JumpIf{Cond: bpf.JumpEqual, Val: v})
	p.fix(len(p.insns)-1, t, f)
}

func (p *prog) jset(v uint32, t, f string) {
	p.add("", bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: v})
	p.fix(len(p.insns)-1, t, f)
}

func (p *prog) jmp(to string) {
	p.add("", bpf.Jump{})
	p.fix(len(p.insns)-1, to, "")
}

// resolve fills in jump offsets; only forward jumps are allowed.
func (p *prog) resolve() ([]bpf.Instruction, error) {
	skip := func(at int, label string) (uint32, error) {
		if label == "" {
			return 0, nil
		}
		to, ok := p.labels[label]
		if !ok || to <= at {
			return 0, fmt.Errorf("bad jump from %d to %q", at, label)
		}
		return uint32(to - at - 1), nil
	}
	for _, j := range p.jumps {
		t, err := skip(j.at, j.true)
		if err != nil {
			return nil, err
		}
		f, err := skip(j.at, j.false)
		if err != nil {
			return nil, err
		}
		switch in := p.insns[j.at].(type) {
		case bpf.JumpIf:
			if t > 255 || f > 255 {
				return nil, fmt.Errorf("jump from %d too far", j.at)
			}
			in.SkipTrue, in.SkipFalse = uint8(t), uint8(f)
			p.insns[j.at] = in
		case bpf.Jump:
			in.Skip = t
			p.insns[j.at] = in
		}
	}
	return p.insns, nil
}
