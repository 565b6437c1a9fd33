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
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// managerProc is the manager binary built from this tree and run as its own OS process, so that
// its memory and CPU are its own and the harness measures whatever the tree's manager does.
type managerProc struct {
	cmd        *exec.Cmd
	log        string
	metricsURL string
	done       chan struct{}
	err        error
}

// buildManager builds ./cmd/manager of the repository at root into dir.
func buildManager(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "manager")
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, "./cmd/manager")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the manager: %w\n%s", err, out)
	}
	return bin, nil
}

// freeAddr returns a loopback address nothing listens on now.
func freeAddr() (string, error) {
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	return addr, ln.Close()
}

// callbackArgs turns the manager's job-result callbacks on at a loopback address, with a key
// file so that the configuration is the one a deployment uses.
func callbackArgs(dir string) ([]string, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	keyFile := filepath.Join(dir, "callback-key")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("b", 32)), 0o600); err != nil {
		return nil, err
	}
	return []string{"--callback-bind-address=" + addr, "--callback-public-url=http://" + addr,
		"--callback-key-file=" + keyFile}, nil
}

// startManager runs bin with the harness's flags first and extra after them: a flag given twice
// takes its last value, so extra overrides the harness's defaults.
func startManager(bin, dir, kubeconfig, serviceURL string, extra []string) (*managerProc, error) {
	metricsAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	args := append([]string{
		"--kubeconfig=" + kubeconfig,
		"--service-base-url=" + serviceURL,
		"--metrics-bind-address=" + metricsAddr, "--metrics-secure=false",
		"--health-probe-bind-address=0",
		// The budget ledgers need a namespace that exists; envtest has no video-operator-system.
		"--budget-ledger-namespace=default",
	}, extra...)
	logPath := filepath.Join(dir, "manager.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(context.Background(), bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, err
	}
	p := &managerProc{cmd: cmd, log: logPath, metricsURL: "http://" + metricsAddr + "/metrics", done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *managerProc) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended (it must not during a run).
func (p *managerProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM and waits for the exit, killing the process after within.
func (p *managerProc) stop(within time.Duration) {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(within):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// logErrors counts the lines of the manager's log at level error: reconcile errors and the like.
func (p *managerProc) logErrors() int {
	f, err := os.Open(p.log)
	if err != nil {
		return -1
	}
	defer func() { _ = f.Close() }()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"level":"error"`) {
			n++
		}
	}
	return n
}
