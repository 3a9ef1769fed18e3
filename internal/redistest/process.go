package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

const (
	// readyTimeout bounds the wait for a new server to answer PING.
	readyTimeout = 10 * time.Second
	// stopTimeout bounds the wait for a server to exit after SIGTERM,
	// after which it is killed.
	stopTimeout = 10 * time.Second
	// portAttempts is how many free ports are tried: another process can
	// take a port between the moment it is found free and redis-server's bind.
	portAttempts = 3
	// logName is the file in the server's directory that takes its output.
	logName = "redis.log"
)

// errPortInUse marks a start that failed because the port was taken.
var errPortInUse = errors.New("port in use")

// process is one running redis-server.
type process struct {
	addr string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

// startFreePort starts redis-server in dir on a free 127.0.0.1 port, trying a
// new port if the chosen one was taken in the meantime.
func startFreePort(dir string, args []string) (*process, error) {
	var err error
	for range portAttempts {
		var addr string
		addr, err = freeAddr()
		if err != nil {
			return nil, err
		}
		var p *process
		p, err = startProcess(dir, addr, args)
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, errPortInUse) {
			return nil, err
		}
	}
	return nil, err
}

// freeAddr returns a 127.0.0.1 address whose port was free a moment ago.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	return addr, nil
}

// startProcess starts redis-server on addr with dir as its working directory
// and waits until it answers PING. Its output goes to dir/redis.log, which
// is quoted in the error if it does not come up.
func startProcess(dir, addr string, args []string) (*process, error) {
	bin, err := lookPath()
	if err != nil {
		return nil, err
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, logName)
	out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open redis-server log: %w", err)
	}
	defer out.Close()                        // the child has its own descriptor
	logStart, err := out.Seek(0, io.SeekEnd) // the output of earlier runs is not this run's
	if err != nil {
		return nil, fmt.Errorf("open redis-server log: %w", err)
	}

	full := append([]string{"--port", port, "--bind", host, "--dir", dir}, args...)
	cmd := exec.Command(bin, full...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = sysProcAttr()
	p := &process{addr: addr, cmd: cmd, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// Linux sends the parent-death signal when the thread that forked
		// the child exits, so that thread is kept until the child is gone.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}

	if err := p.waitReady(); err != nil {
		p.kill()
		log := tail(logPath, logStart)
		if strings.Contains(log, "Address already in use") {
			err = fmt.Errorf("%w: %w", errPortInUse, err)
		}
		return nil, fmt.Errorf("redis-server %s: %w\n%s", joinArgs(full), err, log)
	}
	return p, nil
}

// waitReady polls PING until the server answers PONG, exits, or readyTimeout
// passes. A server loading its AOF answers LOADING, so it is waited for.
func (p *process) waitReady() error {
	deadline := time.Now().Add(readyTimeout)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return fmt.Errorf("exited during startup (%v)", p.cmd.ProcessState)
		default:
		}
		if last = ping(p.addr); last == nil {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("no PONG within %v: %v", readyTimeout, last)
}

// ping sends one PING over a fresh connection and expects +PONG.
func ping(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(time.Second)); err != nil {
		return err
	}
	if _, err := conn.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if line = strings.TrimSpace(line); line != "+PONG" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

// stop sends SIGTERM and waits for the exit; after stopTimeout it kills.
func (p *process) stop() error {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		p.kill()
		return fmt.Errorf("SIGTERM: %w", err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(stopTimeout):
		p.kill()
		return fmt.Errorf("did not exit within %v of SIGTERM; killed", stopTimeout)
	}
}

// kill sends SIGKILL and waits for the exit.
func (p *process) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// tail returns the end of the log file at path from offset from on, for
// error messages.
func tail(path string, from int64) string {
	const limit = 4 << 10
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	b = b[min(from, int64(len(b))):]
	if len(b) > limit {
		b = b[len(b)-limit:]
	}
	return "redis-server log (" + path + "):\n" + string(b)
}
