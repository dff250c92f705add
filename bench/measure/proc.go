package measure

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Heap is the Go heap after a full collection.
type Heap struct {
	Alloc uint64 // MemStats.HeapAlloc: bytes of live objects
	Inuse uint64 // MemStats.HeapInuse: bytes of the spans holding them
}

// HeapAfterGC collects twice (the second one frees what finalizers and sweeping kept
// alive through the first) and reads the heap.
func HeapAfterGC() Heap {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return Heap{Alloc: ms.HeapAlloc, Inuse: ms.HeapInuse}
}

// PeakRSS is the process's peak resident set size (VmHWM in /proc/self/status), in
// bytes.
func PeakRSS() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return ParseVmHWM(f)
}

// ParseVmHWM reads the VmHWM line of a /proc/PID/status file ("VmHWM:   123 kB") and
// returns it in bytes.
func ParseVmHWM(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("malformed VmHWM line %q", sc.Text())
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("malformed VmHWM line %q: %w", sc.Text(), err)
		}
		return kb * 1024, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no VmHWM line")
}

// Usage is a snapshot of what the process has consumed so far.
type Usage struct {
	At      time.Time
	CPU     time.Duration // user + system time of the whole process (getrusage RUSAGE_SELF)
	Mallocs uint64        // MemStats.Mallocs: heap objects allocated
	Bytes   uint64        // MemStats.TotalAlloc: heap bytes allocated
	GCs     uint32        // MemStats.NumGC: garbage collections completed
}

// TakeUsage reads the clock, then the CPU time, then the allocation counters (the last
// stops the world for some microseconds).
func TakeUsage() Usage {
	u := Usage{At: time.Now(), CPU: CPUTime()}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	u.Mallocs, u.Bytes, u.GCs = ms.Mallocs, ms.TotalAlloc, ms.NumGC
	return u
}
