//go:build unix

package delivery

import (
	"errors"
	"net"
	"syscall"
)

// idleOpen tells, without waiting, whether the idle TCP connection c is
// still open and has nothing unread: a peek at its socket finds no bytes
// (EAGAIN). A close by the peer (end of file), bytes nobody asked for (a
// 408, a TLS alert) or an error mean it is not.
func idleOpen(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true // not a socket: nothing to look at
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	open := false
	if err := rc.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		open = errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK)
		return true // never wait
	}); err != nil {
		return false
	}
	return open
}
