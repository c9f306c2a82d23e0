package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRPSTakesEffect reads rps_cpus back through a fresh sysfs of each
// namespace: the DUT's ports on the DUT CPU, the tester ports elsewhere.
func TestRPSTakesEffect(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("building a lab needs root (network namespaces); run the tests as root")
	}
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: the lab does not steer the DUT")
	}
	name := fmt.Sprintf("t%d-rps", os.Getpid())
	st, err := Up(context.Background(), Config{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Down(name) })
	last := runtime.NumCPU() - 1
	var others []int
	for c := range last {
		others = append(others, c)
	}
	if diff := cmp.Diff([]int{last}, st.DUTCPUs); diff != "" {
		t.Errorf("State.DUTCPUs (-want +got):\n%s", diff)
	}
	for _, c := range []struct {
		ns, ifname string
		want       []int
	}{
		{st.DUTNamespace, ifDutA, []int{last}},
		{st.DUTNamespace, ifDutB, []int{last}},
		{st.A.Namespace, ifA, others},
		{st.B.Namespace, ifB, others},
	} {
		got, err := readRPS(c.ns, c.ifname)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s/%s rps_cpus (-want +got):\n%s", c.ns, c.ifname, diff)
		}
	}
	// The host's own sysfs is untouched: our private mounts did not leak.
	if _, err := os.Stat("/sys/class/net/" + ifDutA); err == nil {
		t.Errorf("host /sys shows %s: the namespace's sysfs leaked into the host mount namespace", ifDutA)
	}
	if _, err := Up(context.Background(), Config{Name: name, NoRPS: true}); !errors.Is(err, ErrInUse) {
		t.Errorf("second Up of %s: %v, want ErrInUse", name, err)
	}
}
