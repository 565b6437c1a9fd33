/*
Copyright 2026 The video-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Process figures come from /proc (Linux only), so that the manager and the API server are
// measured as the OS sees them, whatever they do inside.

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat: 100 on every Linux
// architecture Go supports (the kernel scales its internal HZ to it for user space).
const clockTicks = 100

// procStat is what the harness reads of /proc/PID/stat.
type procStat struct {
	comm string
	ppid int
	// cpuSeconds is utime+stime: CPU time the process spent, all its threads.
	cpuSeconds float64
}

func readProcStat(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(string(b))
}

// parseProcStat parses a stat line; comm may hold spaces and parentheses, so the fields are
// counted from the last ')'.
func parseProcStat(line string) (procStat, error) {
	open, closing := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || closing < open {
		return procStat{}, fmt.Errorf("malformed stat line %q", line)
	}
	f := strings.Fields(line[closing+1:])
	// After comm: state(0) ppid(1) ... utime(11) stime(12).
	if len(f) < 13 {
		return procStat{}, fmt.Errorf("short stat line %q", line)
	}
	ppid, err1 := strconv.Atoi(f[1])
	utime, err2 := strconv.ParseFloat(f[11], 64)
	stime, err3 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procStat{}, fmt.Errorf("malformed stat line %q", line)
	}
	return procStat{comm: line[open+1 : closing], ppid: ppid, cpuSeconds: (utime + stime) / clockTicks}, nil
}

// memory returns VmRSS and VmHWM (peak RSS) of pid in MiB, from /proc/PID/status.
func memory(pid int) (rssMiB, peakMiB float64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		f := strings.Fields(rest) // "123456 kB"
		if len(f) < 1 {
			continue
		}
		kb, perr := strconv.ParseFloat(f[0], 64)
		if perr != nil {
			continue
		}
		if name == "VmRSS" {
			rssMiB = kb / 1024
		} else {
			peakMiB = kb / 1024
		}
	}
	return rssMiB, peakMiB, nil
}

// childNamed finds the child process of this one whose command name is comm: envtest starts
// kube-apiserver and etcd as children and does not export their PIDs.
func childNamed(comm string) (int, error) {
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return 0, err
	}
	self := os.Getpid()
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		st, err := readProcStat(pid)
		if err == nil && st.ppid == self && st.comm == comm {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no child process named %s", comm)
}

// machineBusySeconds is the CPU time all processes of the machine spent, from the first line
// of /proc/stat (everything but idle and iowait): with the harness's own processes subtracted,
// it tells whether something else shared the machine during a run.
func machineBusySeconds() (float64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0, fmt.Errorf("unexpected /proc/stat line %q", line)
	}
	busy := 0.0
	for i, v := range f[1:] {
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return 0, err
		}
		// idle (index 3) and iowait (index 4) are not work; guest times are already in user.
		if i != 3 && i != 4 && i < 8 {
			busy += n
		}
	}
	return busy / clockTicks, nil
}

// loadAverage is the one-minute load average.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
