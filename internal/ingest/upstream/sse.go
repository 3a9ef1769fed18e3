package upstream

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// errEventTooLarge ends a stream whose event (or line) exceeds the bound.
var errEventTooLarge = errors.New("an event of the stream is larger than the limit")

// sseReader reads the data of server-sent events (the WHATWG format):
// lines end with LF, CRLF or CR; "data:" lines of one event are joined
// with LF; comments (": ping") and the other fields (id, event, retry) are
// ignored; a blank line ends an event. An event at the end of the stream
// without its blank line is dropped, as the format says. No line and no
// event may exceed max bytes.
type sseReader struct {
	sc  *bufio.Scanner
	max int
}

func newSSEReader(r io.Reader, max int) *sseReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(64<<10, max+16)), max+16) // room for "data: " and the line end
	sc.Split(scanSSELines)
	return &sseReader{sc: sc, max: max}
}

// next returns the data of the next event that has any; io.EOF at the end
// of the stream.
func (s *sseReader) next() ([]byte, error) {
	var data []byte
	have := false
	for s.sc.Scan() {
		line := s.sc.Bytes()
		if len(line) == 0 { // the end of an event
			if have && len(bytes.TrimSpace(data)) > 0 {
				return data, nil
			}
			data, have = data[:0], false
			continue
		}
		if line[0] == ':' {
			continue // a comment: keep-alive
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		if string(field) != "data" {
			continue
		}
		value = bytes.TrimPrefix(value, []byte(" "))
		if have {
			data = append(data, '\n')
		}
		if len(data)+len(value) > s.max {
			return nil, errEventTooLarge
		}
		data, have = append(data, value...), true
	}
	if err := s.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, errEventTooLarge
		}
		return nil, err
	}
	return nil, io.EOF
}

// scanSSELines splits at LF, CRLF or CR.
func scanSSELines(data []byte, atEOF bool) (int, []byte, error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		if data[i] == '\n' {
			return i + 1, data[:i], nil
		}
		switch {
		case i+1 < len(data) && data[i+1] == '\n':
			return i + 2, data[:i], nil
		case i+1 < len(data) || atEOF:
			return i + 1, data[:i], nil
		}
		return 0, nil, nil // a CR at the end of what was read: an LF may follow
	}
	if atEOF {
		return len(data), data, nil
	}
	return 0, nil, nil
}
