package a2a

import (
	"bufio"
	"bytes"
	"time"
)

// How a stream hands its bytes to the HTTP server. fasthttp copies every
// write of a streamed body into a buffer of its own and queues a few of
// them ahead of the socket, so an event written whole is copied whole, and
// a client that stops reading would keep that copy, and the event, alive
// until the write deadline. Streams therefore write in chunks, and while
// they hold more than their buffer limit they give the client much less
// time to take the next chunk.
const (
	// sseChunk is the most a stream hands the server in one write: with the
	// few writes fasthttp queues, what sits between a stream and a client
	// that stopped reading is bounded by a few chunks, whatever the event.
	sseChunk = 32 << 10
	// writeTimeout bounds each write while the stream holds no more than its
	// buffer limit, so that a client that stopped reading cannot hold a
	// stream slot forever.
	writeTimeout = 30 * time.Second
	// slowClientGrace bounds each write while the stream holds more than its
	// buffer limit (the rest of a large event): a client that takes none of
	// a chunk for that long is dropped, and what the stream held is freed.
	slowClientGrace = 2 * time.Second
	// DefaultStreamMaxBuffer is StreamConfig.MaxBuffer's default.
	DefaultStreamMaxBuffer = 256 << 10
)

// sendFrame writes one SSE frame, "id: <id>\n" (when id is set) "data:
// <head><data><tail>\n\n" (head and tail are the binding's envelope), in
// chunks of at most sseChunk, each flushed within its own deadline:
// writeTimeout, or slowClientGrace while more than the stream's buffer
// limit of the frame is still to go. Once the rest of a larger data fits
// the limit, it is copied out and data is let go (release is called, when
// set: data may be an event other streams share), so that what a slow
// client keeps the stream holding is at most its limit: the caller must
// not keep data. An error means the client is gone or too slow: the
// caller ends the stream, and the server closes the connection (a client
// that reads again gets what was sent, then the end of the stream, and
// resumes with Last-Event-ID).
func (s *subscription) sendFrame(w *bufio.Writer, id string, head, data, tail []byte, release func()) error {
	letGo := func() {
		if release != nil {
			release()
			release = nil
		}
	}
	defer letGo()
	limit := s.ep.streamCfg.MaxBuffer
	pre := "data: "
	if id != "" {
		pre = "id: " + id + "\n" + pre
	}
	left := len(pre) + len(head) + len(data) + len(tail) + 2
	if _, err := w.WriteString(pre); err != nil {
		return err
	}
	if _, err := w.Write(head); err != nil {
		return err
	}
	left -= len(pre) + len(head)
	big := len(data) > limit
	for len(data) > 0 {
		if big && len(data) <= limit {
			data, big = bytes.Clone(data), false
			letGo()
		}
		n := min(len(data), sseChunk)
		if _, err := w.Write(data[:n]); err != nil {
			return err
		}
		if err := s.flushHolding(w, left); err != nil {
			return err
		}
		data, left = data[n:], left-n
	}
	letGo()
	if _, err := w.Write(tail); err != nil {
		return err
	}
	if _, err := w.WriteString("\n\n"); err != nil {
		return err
	}
	return s.flushHolding(w, left)
}

// flushHolding sends what is buffered while the stream holds held bytes
// of the frame (those flushed now included), within the deadline that
// amount allows.
func (s *subscription) flushHolding(w *bufio.Writer, held int) error {
	if s.conn != nil {
		d := writeTimeout
		if held > s.ep.streamCfg.MaxBuffer {
			d = slowClientGrace
		}
		_ = s.conn.SetWriteDeadline(time.Now().Add(d))
	}
	return w.Flush()
}
