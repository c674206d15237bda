package localcp

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// PeakRSS returns the peak resident set size of process pid in bytes: the
// VmHWM line of /proc/<pid>/status (Linux), which the kernel keeps after
// the process ends until it is reaped. Errors name the file or the line.
func PeakRSS(pid int) (int64, error) {
	file := fmt.Sprintf("/proc/%d/status", pid)
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s: VmHWM %q: %w", file, v, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("%s has no VmHWM line", file)
}
