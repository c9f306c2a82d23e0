package lab

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/google/nftables"
	"github.com/rfc2544/rfc2544/internal/nsutil"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Capability bits (linux/capability.h).
const (
	capNetAdmin = 12
	capSysAdmin = 21
)

// checkPrivileges reports, before anything is created, whether this process
// may create namespaces, links and mounts.
func checkPrivileges() error {
	if os.Geteuid() == 0 {
		return nil
	}
	eff, err := effectiveCaps()
	if err == nil && eff&(1<<capNetAdmin) != 0 && eff&(1<<capSysAdmin) != 0 {
		return nil
	}
	return fmt.Errorf("the lab needs root, or CAP_NET_ADMIN and CAP_SYS_ADMIN, to create and remove network namespaces, veth links and sysfs mounts: run it with sudo: %w", os.ErrPermission)
}

func effectiveCaps() (uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapEff:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	return 0, errors.New("no CapEff in /proc/self/status")
}

// onFreshThread runs fn on a new locked OS thread that is thrown away
// afterwards (the goroutine exits still locked, so the runtime terminates
// the thread). fn may change the thread's namespaces freely.
func onFreshThread(fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		done <- fn()
	}()
	return <-done
}

// nsExists reports whether the named network namespace is bound.
func nsExists(name string) bool {
	_, err := os.Stat(filepath.Join("/run/netns", name))
	return err == nil
}

// createNS creates and binds the named network namespace and returns a
// handle to it, leaving the calling thread's namespace alone.
func createNS(name string) (netns.NsHandle, error) {
	var h netns.NsHandle
	err := onFreshThread(func() error {
		var err error
		h, err = netns.NewNamed(name)
		if err != nil {
			return fmt.Errorf("create network namespace %q: %w", name, err)
		}
		return nil
	})
	return h, err
}

// deleteNS unbinds the named namespace; it is gone once no process holds
// it. A missing namespace is not an error.
func deleteNS(name string) error {
	if !nsExists(name) {
		return nil
	}
	if err := netns.DeleteNamed(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete network namespace %q: %w", name, err)
	}
	return nil
}

// writeSysctls writes /proc/sys entries (paths relative to /proc/sys)
// inside the named namespace.
func writeSysctls(ns string, kv [][2]string) error {
	return nsutil.Do(ns, func() error {
		for _, e := range kv {
			p := filepath.Join("/proc/sys", e[0])
			if err := os.WriteFile(p, []byte(e[1]), 0o644); err != nil {
				return fmt.Errorf("set sysctl %s=%s in %s: %w", e[0], e[1], ns, err)
			}
		}
		return nil
	})
}

// setRPS steers receive processing of ifaces (inside network namespace ns)
// to cpus, and reads the setting back. /sys/class/net shows the network
// namespace of whoever mounted sysfs, so this runs on a throw-away thread
// in a private mount namespace with a fresh sysfs mounted from inside ns;
// nothing of it is visible to the rest of the host.
func setRPS(ns string, ifaces []string, cpus []int) error {
	mask := cpuMask(cpus)
	return onFreshThread(func() error {
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			return fmt.Errorf("rps: unshare mount namespace: %w", err)
		}
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
			return fmt.Errorf("rps: make mounts private: %w", err)
		}
		h, err := netns.GetFromName(ns)
		if err != nil {
			return fmt.Errorf("rps: open namespace %q: %w", ns, err)
		}
		defer h.Close()
		if err := netns.Set(h); err != nil {
			return fmt.Errorf("rps: enter namespace %q: %w", ns, err)
		}
		if err := unix.Mount("sysfs", "/sys", "sysfs", 0, ""); err != nil {
			return fmt.Errorf("rps: mount sysfs for namespace %q: %w", ns, err)
		}
		for _, ifc := range ifaces {
			p := fmt.Sprintf("/sys/class/net/%s/queues/rx-0/rps_cpus", ifc)
			if err := os.WriteFile(p, []byte(mask), 0o644); err != nil {
				return fmt.Errorf("rps: set %s to %s: %w", p, mask, err)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return fmt.Errorf("rps: read back %s: %w", p, err)
			}
			got, err := parseCPUMask(string(b))
			if err != nil {
				return fmt.Errorf("rps: read back %s: %w", p, err)
			}
			if fmt.Sprint(got) != fmt.Sprint(cpus) {
				return fmt.Errorf("rps: %s reads %q after writing %q", p, strings.TrimSpace(string(b)), mask)
			}
		}
		return nil
	})
}

// readRPS returns the RPS CPUs of iface inside ns (for tests and status).
func readRPS(ns, iface string) ([]int, error) {
	var cpus []int
	err := onFreshThread(func() error {
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			return fmt.Errorf("unshare mount namespace: %w", err)
		}
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
			return fmt.Errorf("make mounts private: %w", err)
		}
		h, err := netns.GetFromName(ns)
		if err != nil {
			return fmt.Errorf("open namespace %q: %w", ns, err)
		}
		defer h.Close()
		if err := netns.Set(h); err != nil {
			return fmt.Errorf("enter namespace %q: %w", ns, err)
		}
		if err := unix.Mount("sysfs", "/sys", "sysfs", 0, ""); err != nil {
			return fmt.Errorf("mount sysfs: %w", err)
		}
		b, err := os.ReadFile(fmt.Sprintf("/sys/class/net/%s/queues/rx-0/rps_cpus", iface))
		if err != nil {
			return err
		}
		cpus, err = parseCPUMask(string(b))
		return err
	})
	return cpus, err
}

var (
	featureOnce sync.Once
	features    Features
	featureErr  error
)

// probeFeatures finds, once per process, which qdiscs and whether nftables
// this kernel has, by trying them on the loopback of an anonymous network
// namespace that vanishes with its thread.
func probeFeatures() (Features, error) {
	featureOnce.Do(func() {
		features.CPUs = runtime.NumCPU()
		featureErr = onFreshThread(func() error {
			if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
				return fmt.Errorf("probe kernel features: unshare network namespace: %w", err)
			}
			h, err := netlink.NewHandle()
			if err != nil {
				return fmt.Errorf("probe kernel features: netlink: %w", err)
			}
			defer h.Close()
			lo, err := h.LinkByName("lo")
			if err != nil {
				return fmt.Errorf("probe kernel features: %w", err)
			}
			if err := h.LinkSetUp(lo); err != nil {
				return fmt.Errorf("probe kernel features: %w", err)
			}
			try := func(q netlink.Qdisc) bool {
				if err := h.QdiscAdd(q); err != nil {
					return false
				}
				_ = h.QdiscDel(q)
				return true
			}
			attrs := netlink.QdiscAttrs{LinkIndex: lo.Attrs().Index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT}
			features.Netem = try(netlink.NewNetem(attrs, netlink.NetemQdiscAttrs{Latency: 1000}))
			features.Tbf = try(&netlink.Tbf{QdiscAttrs: attrs, Rate: 125000, Limit: 10000, Buffer: netlink.Xmittime(125000, 3000)})
			nft, err := nftables.New()
			if err == nil {
				nft.AddTable(&nftables.Table{Name: "probe", Family: nftables.TableFamilyINet})
				features.Nftables = nft.Flush() == nil
				_ = nft.CloseLasting()
			}
			return nil
		})
	})
	return features, featureErr
}
