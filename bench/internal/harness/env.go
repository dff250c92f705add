package harness

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// Env is the machine and code a report was measured on.
type Env struct {
	CPU       string
	Cores     int
	MemoryGiB float64
	GoVersion string
	Commit    string // short hash, "+dirty" when the tree had changes
	Date      time.Time
}

// CurrentEnv describes this machine and checkout.
func CurrentEnv() Env {
	e := Env{Cores: runtime.NumCPU(), GoVersion: runtime.Version(), Date: time.Now().UTC()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				e.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb float64
		for _, l := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(l, "MemTotal:"); ok {
				f := strings.Fields(rest)
				if len(f) > 0 {
					for _, c := range f[0] {
						kb = kb*10 + float64(c-'0')
					}
				}
			}
		}
		e.MemoryGiB = kb / (1 << 20)
	}
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		e.Commit = strings.TrimSpace(string(out))
		// Changes to prose and to earlier results do not change what was measured.
		if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!*.md", ":!bench/results").Output(); err == nil && len(st) > 0 {
			e.Commit += "+dirty"
		}
	}
	return e
}
