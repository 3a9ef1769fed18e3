package chaos

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Build compiles the relay command into dir and returns the binary's path.
// With race the binary is built with the race detector.
func Build(ctx context.Context, dir string, race bool) (string, error) {
	return BuildTags(ctx, dir, race)
}

// BuildTags is Build with build tags (failpoint: a relay that a test can
// kill at a named point, internal/failpoint).
func BuildTags(ctx context.Context, dir string, race bool, tags ...string) (string, error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("chaos: no go command on PATH to build relay with: %w", err)
	}
	bin := filepath.Join(dir, "relay")
	args := []string{"build", "-o", bin}
	if race {
		args = append(args, "-race")
	}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.CommandContext(ctx, gobin, append(args, "github.com/a2arelay/relay/cmd/relay")...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build relay: %w\n%s", err, out)
	}
	return bin, nil
}

// FreeAddr returns a 127.0.0.1 address whose port was free a moment ago.
// The port is below Linux's ephemeral range (32768 up), so while a killed
// relay is down no outgoing connection takes its port as a local port.
func FreeAddr() (string, error) {
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(15000+rand.IntN(15000)))
		if err == nil {
			defer l.Close()
			return l.Addr().String(), nil
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Relay is one relay process. It keeps its address across restarts, and
// appends the output of every run to its log file.
type Relay struct {
	Name    string
	Bin     string
	Addr    string
	Env     []string
	LogPath string

	mu       sync.Mutex
	proc     *os.Process
	done     chan struct{} // closed when the current process has exited
	expected bool          // the current process is being stopped or killed on purpose
	// crashes lists the runs that ended without being asked to.
	crashes []string
}

// URL is the relay's A2A endpoint.
func (r *Relay) URL() string { return "http://" + r.Addr + "/" }

// Base is the relay's base URL, without the trailing slash.
func (r *Relay) Base() string { return "http://" + r.Addr }

// Start starts the process and waits until it answers /healthz.
func (r *Relay) Start(ctx context.Context) error {
	r.mu.Lock()
	if r.proc != nil {
		r.mu.Unlock()
		return fmt.Errorf("%s is running already", r.Name)
	}
	logf, err := os.OpenFile(r.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		r.mu.Unlock()
		return err
	}
	fmt.Fprintf(logf, "=== chaos: start %s on %s at %s\n", r.Name, r.Addr, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(r.Bin)
	cmd.Env = append(os.Environ(), append([]string{"RELAY_ADDR=" + r.Addr}, r.Env...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr()
	done := make(chan struct{})
	started := make(chan error, 1)
	go func() {
		// Linux sends the parent-death signal when the thread that forked
		// the child exits: keep that thread until the child is gone.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer logf.Close()
		if err := cmd.Start(); err != nil {
			started <- err
			close(done)
			return
		}
		started <- nil
		err := cmd.Wait()
		r.mu.Lock()
		if !r.expected {
			r.crashes = append(r.crashes, fmt.Sprintf("%s exited by itself: %v", r.Name, err))
		}
		r.proc, r.expected = nil, false
		r.mu.Unlock()
		close(done)
	}()
	if err := <-started; err != nil {
		r.mu.Unlock()
		return fmt.Errorf("start %s: %w", r.Name, err)
	}
	r.proc, r.done, r.expected = cmd.Process, done, false
	r.mu.Unlock()
	return r.waitHealthy(ctx, done)
}

func (r *Relay) waitHealthy(ctx context.Context, done <-chan struct{}) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return fmt.Errorf("%s exited during startup:\n%s", r.Name, r.Tail(30))
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		resp, err := client.Get(r.Base() + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s did not answer /healthz within 20s:\n%s", r.Name, r.Tail(30))
}

// Exited is closed when the process that runs now (or ran last) has exited.
func (r *Relay) Exited() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done
}

// Kill kills the process with SIGKILL, as a crash would, and waits for it.
func (r *Relay) Kill() { r.signal(syscall.SIGKILL, 0) }

// Stop asks the process to shut down (SIGTERM) and kills it after timeout.
func (r *Relay) Stop(timeout time.Duration) { r.signal(syscall.SIGTERM, timeout) }

func (r *Relay) signal(sig syscall.Signal, timeout time.Duration) {
	r.mu.Lock()
	p, done := r.proc, r.done
	if p == nil {
		r.mu.Unlock()
		return
	}
	r.expected = true
	r.mu.Unlock()
	_ = p.Signal(sig)
	if sig == syscall.SIGKILL {
		<-done
		return
	}
	select {
	case <-done:
	case <-time.After(timeout):
		_ = p.Kill()
		<-done
	}
}

// Freeze stops the process (SIGSTOP) as a long pause would (a VM freeze,
// a stalled container); Thaw lets it go on (SIGCONT).
func (r *Relay) Freeze() { r.send(syscall.SIGSTOP) }

// Thaw resumes a frozen process.
func (r *Relay) Thaw() { r.send(syscall.SIGCONT) }

func (r *Relay) send(sig syscall.Signal) {
	r.mu.Lock()
	p := r.proc
	r.mu.Unlock()
	if p != nil {
		_ = p.Signal(sig)
	}
}

// Crashes lists the runs of the process that ended without Kill or Stop.
func (r *Relay) Crashes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.crashes...)
}

// Tail returns the last n lines of the process's log.
func (r *Relay) Tail(n int) string {
	b, err := os.ReadFile(r.LogPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// Grep returns the lines of the process's log that contain any of words.
func (r *Relay) Grep(words ...string) []string {
	b, err := os.ReadFile(r.LogPath)
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		for _, w := range words {
			if strings.Contains(l, w) {
				out = append(out, l)
				break
			}
		}
	}
	return out
}
