package lab_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
	"github.com/rfc2544/rfc2544/lab/relay"
)

// upHelperEnv makes the test binary a process that runs lab.Up of a relay
// lab by that name and then waits to be killed.
const upHelperEnv = "RFC2544_LAB_TEST_UP"

func TestMain(m *testing.M) {
	relay.Enter()
	if name := os.Getenv(upHelperEnv); name != "" {
		if _, err := lab.Up(context.Background(), lab.Config{Name: name, DUT: lab.DUTRelay}); err != nil {
			os.Exit(1)
		}
		time.Sleep(time.Hour)
	}
	os.Exit(m.Run())
}

// leftovers lists what of lab name exists: namespaces and files.
func leftovers(t *testing.T, name string) []string {
	t.Helper()
	var out []string
	a, dut, b := lab.Namespaces(name)
	for _, ns := range []string{a, dut, b} {
		if _, err := os.Stat(filepath.Join("/run/netns", ns)); err == nil {
			out = append(out, "namespace "+ns)
		}
	}
	files, _ := filepath.Glob(filepath.Join(lab.StateDir, name+".*"))
	return append(out, files...)
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && b[i+2] != 'Z'
}

func TestDownRemovesEverything(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	tests := []struct {
		name string
		cfg  lab.Config
	}{
		{name: "kernel", cfg: lab.Config{FWRules: 10, AtoB: lab.Shaping{RateBps: 10e6, LossPercent: 1}}},
		{name: "relay", cfg: lab.Config{DUT: lab.DUTRelay, Delay: time.Millisecond}},
		{name: "loop", cfg: lab.Config{Topology: lab.TopologyLoop}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Name = labtest.Name(t)
			st, err := lab.Up(context.Background(), tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := lab.Down(st.Name); err != nil {
				t.Fatal(err)
			}
			if l := leftovers(t, st.Name); len(l) > 0 {
				t.Errorf("after down: %v", l)
			}
			if st.RelayPID != 0 && alive(st.RelayPID) {
				t.Errorf("relay %d still runs after down", st.RelayPID)
			}
			if err := lab.Down(st.Name); err != nil {
				t.Errorf("second down: %v", err)
			}
			if names, _ := lab.List(); strings.Contains(strings.Join(names, " "), st.Name) {
				t.Errorf("List after down = %v", names)
			}
		})
	}
}

// TestUpAfterKilledUp kills a process in the middle of Up (relay started,
// state not written yet) and checks that a new Up of the name works and
// that Down then leaves nothing, the orphaned relay included.
func TestUpAfterKilledUp(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	name := labtest.Name(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), upHelperEnv+"="+name)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(lab.StateDir, name+".relay.pid")
	var relayPID int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil {
			if relayPID, err = strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				break
			}
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	t.Cleanup(func() { lab.Down(name) })
	if relayPID == 0 {
		t.Fatal("the helper's Up never started a relay")
	}
	if _, err := os.Stat(filepath.Join(lab.StateDir, name+".json")); err == nil {
		t.Log("the helper finished Up before the kill; leftovers are a complete lab")
	}
	l := leftovers(t, name)
	t.Logf("after kill: relay %d alive %v, %v", relayPID, alive(relayPID), l)
	if len(l) == 0 {
		t.Fatal("kill left nothing behind: the test tests nothing")
	}
	// A complete lab is "in use"; a half-built one is cleared by Up.
	if _, err := os.Stat(filepath.Join(lab.StateDir, name+".json")); err == nil {
		if err := lab.Down(name); err != nil {
			t.Fatal(err)
		}
	}
	st, err := lab.Up(context.Background(), lab.Config{Name: name, DUT: lab.DUTRelay})
	if err != nil {
		t.Fatalf("up after killed up: %v", err)
	}
	if alive(relayPID) {
		t.Errorf("the orphaned relay %d survived the new up", relayPID)
	}
	warm(t, st, false)
	if err := lab.Down(name); err != nil {
		t.Fatal(err)
	}
	if l := leftovers(t, name); len(l) > 0 {
		t.Errorf("after down: %v", l)
	}
	if alive(st.RelayPID) {
		t.Errorf("relay %d still runs after down", st.RelayPID)
	}
}

// TestDownSparesStrangers: a PID file naming a process that is not this
// lab's relay (here: the test itself) must not get it killed.
func TestDownSparesStrangers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	name := labtest.Name(t)
	os.MkdirAll(lab.StateDir, 0o755)
	pidFile := filepath.Join(lab.StateDir, name+".relay.pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := lab.Down(name); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(pidFile); err == nil {
		t.Error("pid file left behind")
	}
	// Still here: Down did not signal us.
}
