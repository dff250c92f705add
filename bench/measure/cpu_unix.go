//go:build unix

package measure

import (
	"syscall"
	"time"
)

// CPUTime is the user plus system CPU time the process has used (getrusage
// RUSAGE_SELF), all threads included; 0 if it cannot be read.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
