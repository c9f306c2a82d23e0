//go:build linux

package trials

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/rfc2544/rfc2544/internal/netdev"
	"golang.org/x/sys/unix"
)

// errNoPause: the driver has no flow control setting or counters.
var errNoPause = errors.New("the driver has no Ethernet flow control (pause) support")

// ethtool string set and string length (linux/ethtool.h).
const (
	ethSSStats    = 1
	ethGStringLen = 32
)

// ReadPause reads ifname's flow control setting inside network namespace
// ns ("" for the current one). Drivers without pause (veth, most virtual
// links) give an error.
func ReadPause(ns, ifname string) (PauseParam, error) {
	var p PauseParam
	err := netdev.Ethtool(ns, ifname, func(ethtool func(cmd []byte) error) error {
		buf := make([]byte, 16) // struct ethtool_pauseparam
		binary.NativeEndian.PutUint32(buf, unix.ETHTOOL_GPAUSEPARAM)
		if err := ethtool(buf); err != nil {
			if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EINVAL) {
				return fmt.Errorf("pause parameters of %s: %w", ifname, errNoPause)
			}
			return fmt.Errorf("pause parameters of %s: %w", ifname, err)
		}
		p.Autoneg = binary.NativeEndian.Uint32(buf[4:]) != 0
		p.RX = binary.NativeEndian.Uint32(buf[8:]) != 0
		p.TX = binary.NativeEndian.Uint32(buf[12:]) != 0
		return nil
	})
	return p, err
}

// readPauseFrames reads the PAUSE frames ifname received and sent so far
// (driver statistics, ethtool -S); ok is false when the driver has none.
func readPauseFrames(ns, ifname string) (rx, tx uint64, ok bool) {
	err := netdev.Ethtool(ns, ifname, func(ethtool func(cmd []byte) error) error {
		info := make([]byte, 16+4) // ethtool_sset_info with one count
		binary.NativeEndian.PutUint32(info, unix.ETHTOOL_GSSET_INFO)
		binary.NativeEndian.PutUint64(info[8:], 1<<ethSSStats)
		if err := ethtool(info); err != nil {
			return err
		}
		if binary.NativeEndian.Uint64(info[8:]) == 0 {
			return errNoPause
		}
		n := int(binary.NativeEndian.Uint32(info[16:]))
		if n <= 0 || n > 1<<16 {
			return errNoPause
		}
		strs := make([]byte, 12+n*ethGStringLen)
		binary.NativeEndian.PutUint32(strs, unix.ETHTOOL_GSTRINGS)
		binary.NativeEndian.PutUint32(strs[4:], ethSSStats)
		binary.NativeEndian.PutUint32(strs[8:], uint32(n))
		if err := ethtool(strs); err != nil {
			return err
		}
		names := make([]string, n)
		any := false
		for i := range names {
			b := strs[12+i*ethGStringLen : 12+(i+1)*ethGStringLen]
			if j := indexZero(b); j >= 0 {
				b = b[:j]
			}
			names[i] = string(b)
			r, t := pauseStat(names[i])
			any = any || r || t
		}
		if !any {
			return errNoPause
		}
		st := make([]byte, 8+n*8)
		binary.NativeEndian.PutUint32(st, unix.ETHTOOL_GSTATS)
		binary.NativeEndian.PutUint32(st[4:], uint32(n))
		if err := ethtool(st); err != nil {
			return err
		}
		vals := make([]uint64, n)
		for i := range vals {
			vals[i] = binary.NativeEndian.Uint64(st[8+i*8:])
		}
		rx, tx = sumPause(names, vals)
		return nil
	})
	return rx, tx, err == nil
}

func indexZero(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}

// PauseWarnings says, for each of the engine's ports with flow control on,
// what that means and how to turn it off (see PauseWarning). Ports whose
// driver has no pause setting (veth) give none.
func (e *Engine) PauseWarnings() []string {
	var out []string
	for _, p := range e.ports {
		if p == nil {
			continue
		}
		pp, err := ReadPause(p.cfg.Namespace, p.cfg.Interface)
		if err != nil {
			continue
		}
		if w := PauseWarning(p.where(), p.cfg.Interface, pp); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// pauseSnap is the ports' PAUSE counters at the start of a trial.
type pauseSnap struct {
	rx, tx [2]uint64
	ok     [2]bool
}

func snapPause(ports [2]*port) pauseSnap {
	var s pauseSnap
	for i, p := range ports {
		if p != nil {
			s.rx[i], s.tx[i], s.ok[i] = readPauseFrames(p.cfg.Namespace, p.cfg.Interface)
		}
	}
	return s
}

// since returns the PAUSE frames each port received during the trial (-1:
// unknown).
func (s pauseSnap) since(ports [2]*port) [2]int64 {
	out := [2]int64{-1, -1}
	for i, p := range ports {
		if p == nil || !s.ok[i] {
			continue
		}
		if rx, _, ok := readPauseFrames(p.cfg.Namespace, p.cfg.Interface); ok && rx >= s.rx[i] {
			out[i] = int64(rx - s.rx[i])
		}
	}
	return out
}
