//go:build linux

package lab_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
)

// cpuTimes are one CPU's /proc/stat times in clock ticks.
type cpuTimes struct {
	user, nice, system, idle, iowait, irq, softirq, steal uint64
}

func (c cpuTimes) total() uint64 {
	return c.user + c.nice + c.system + c.idle + c.iowait + c.irq + c.softirq + c.steal
}

// parseCPUStat returns the times of CPU cpu from /proc/stat's text.
func parseCPUStat(b []byte, cpu int) (cpuTimes, error) {
	want := "cpu" + strconv.Itoa(cpu)
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 9 || f[0] != want {
			continue
		}
		var v [8]uint64
		for i := range v {
			n, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return cpuTimes{}, fmt.Errorf("/proc/stat %s field %d: %w", want, i+1, err)
			}
			v[i] = n
		}
		return cpuTimes{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]}, nil
	}
	return cpuTimes{}, fmt.Errorf("/proc/stat: no line for %s", want)
}

// softnet is one CPU's /proc/net/softnet_stat: frames its backlog took in,
// frames dropped because the backlog was full, and the times the receive
// softirq ran out of budget (the rest deferred to ksoftirqd).
type softnet struct{ processed, dropped, squeezed uint64 }

// parseSoftnet returns line cpu of /proc/net/softnet_stat (hex fields; one
// line per online CPU, in order).
func parseSoftnet(b []byte, cpu int) (softnet, error) {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if cpu >= len(lines) {
		return softnet{}, fmt.Errorf("softnet_stat: %d lines, no CPU %d", len(lines), cpu)
	}
	f := strings.Fields(lines[cpu])
	if len(f) < 3 {
		return softnet{}, fmt.Errorf("softnet_stat line %d: %q", cpu, lines[cpu])
	}
	var v [3]uint64
	for i := range v {
		n, err := strconv.ParseUint(f[i], 16, 64)
		if err != nil {
			return softnet{}, fmt.Errorf("softnet_stat line %d field %d: %w", cpu, i, err)
		}
		v[i] = n
	}
	return softnet{v[0], v[1], v[2]}, nil
}

// cpuSample reads CPU cpu's times and softnet counters.
func cpuSample(cpu int) (cpuTimes, softnet, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}, softnet{}, err
	}
	ct, err := parseCPUStat(b, cpu)
	if err != nil {
		return cpuTimes{}, softnet{}, err
	}
	if b, err = os.ReadFile("/proc/net/softnet_stat"); err != nil {
		return cpuTimes{}, softnet{}, err
	}
	sn, err := parseSoftnet(b, cpu)
	return ct, sn, err
}

// cpuWatch wraps a tester and logs, for each trial, where the DUT's CPU
// went: its softirq share (the DUT's forwarding), the share other tasks
// took (user and system time, the tester's own runtime threads among
// them), steal (the hypervisor), idle, and its backlog's drops and budget
// squeezes. A zero-loss search that lands below the DUT's capacity shows
// here whether the DUT lost its CPU during the lossy trials.
type cpuWatch struct {
	t    *testing.T
	next rfc2544.Tester
	cpu  int
}

func (w cpuWatch) Run(ctx context.Context, spec trials.Spec) (trials.Result, error) {
	cpus := []int{w.cpu}
	if w.cpu != 0 {
		cpus = append(cpus, 0) // the tester's CPU on the lab (fwEngine)
	}
	type sample struct {
		c   cpuTimes
		s   softnet
		err error
	}
	take := func() []sample {
		var out []sample
		for _, c := range cpus {
			ct, sn, err := cpuSample(c)
			out = append(out, sample{ct, sn, err})
		}
		return out
	}
	before := take()
	res, err := w.next.Run(ctx, spec)
	after := take()
	line := fmt.Sprintf("    %.0f fps: loss %.3f%%", spec.RateFPS, res.LossPercent())
	for i, c := range cpus {
		b, a := before[i], after[i]
		if b.err != nil || a.err != nil {
			line += fmt.Sprintf("; cpu%d: %v %v", c, b.err, a.err)
			continue
		}
		d := float64(a.c.total() - b.c.total())
		if d == 0 {
			d = 1
		}
		pct := func(x, y uint64) float64 { return 100 * float64(y-x) / d }
		who := "DUT"
		if c != w.cpu {
			who = "tester"
		}
		line += fmt.Sprintf("; %s cpu%d: softirq %.0f%% user+system %.0f%% nice %.0f%% steal %.0f%% idle %.0f%%, backlog took %d dropped %d squeezed %d",
			who, c, pct(b.c.softirq, a.c.softirq), pct(b.c.user+b.c.system, a.c.user+a.c.system), pct(b.c.nice, a.c.nice),
			pct(b.c.steal, a.c.steal), pct(b.c.idle+b.c.iowait, a.c.idle+a.c.iowait), a.s.processed-b.s.processed, a.s.dropped-b.s.dropped, a.s.squeezed-b.s.squeezed)
	}
	w.t.Log(line)
	return res, err
}

func TestParseCPUStat(t *testing.T) {
	stat := "cpu  10 20 30 40 50 60 70 80 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\ncpu1 11 12 13 14 15 16 17 18 0 0\nintr 5\n"
	got, err := parseCPUStat([]byte(stat), 1)
	if want := (cpuTimes{11, 12, 13, 14, 15, 16, 17, 18}); err != nil || got != want {
		t.Errorf("cpu1 = %+v, %v; want %+v", got, err, want)
	}
	if _, err := parseCPUStat([]byte(stat), 2); err == nil {
		t.Error("cpu2: no error")
	}
	sn := "0000000a 00000002 00000003 0 0\n0000ff00 00000010 00000001 0 0\n"
	s, err := parseSoftnet([]byte(sn), 1)
	if want := (softnet{0xff00, 0x10, 1}); err != nil || s != want {
		t.Errorf("softnet cpu1 = %+v, %v; want %+v", s, err, want)
	}
}
