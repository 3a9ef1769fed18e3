package a2a

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// TextValid reports whether a JSON body is UTF-8 and escapes no lone
// UTF-16 surrogate in its strings: what decoding would otherwise replace,
// silently, with U+FFFD. Endpoints refuse such bodies instead.
func TextValid(body []byte) bool { return utf8.Valid(body) && surrogatesPaired(body) }

// surrogatesPaired reports whether every \uXXXX escape of a UTF-16
// surrogate in the strings of body is a high one followed by a low one: a
// lone surrogate names no character. body need not be valid JSON.
func surrogatesPaired(body []byte) bool {
	inString := false
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c == '"':
			inString = !inString
		case c != '\\' || !inString:
		case i+1 < len(body) && body[i+1] == 'u':
			r := hex4(body[i+2:])
			switch {
			case r >= 0xD800 && r < 0xDC00:
				if i+6 > len(body) || !bytes.HasPrefix(body[i+6:], []byte(`\u`)) {
					return false
				}
				if lo := hex4(body[i+8:]); lo < 0xDC00 || lo >= 0xE000 {
					return false
				}
				i += 11
			case r >= 0xDC00 && r < 0xE000:
				return false
			default:
				i += 5
			}
		default:
			i++ // every other escape is one byte more: skip it
		}
	}
	return true
}

// hex4 decodes the four hex digits b starts with (valid JSON guarantees
// them after \u), or returns -1.
func hex4(b []byte) int {
	if len(b) < 4 {
		return -1
	}
	n := 0
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			n = n<<4 | int(c-'0')
		case c >= 'a' && c <= 'f':
			n = n<<4 | int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			n = n<<4 | int(c-'A'+10)
		default:
			return -1
		}
	}
	return n
}

// ParseVersion maps an A2A-Version header to a dialect ("" when absent).
func ParseVersion(h string) (Dialect, bool) {
	h = strings.TrimSpace(h)
	switch h {
	case "":
		return "", true
	case "0.1", "0.1.0", "0.2", "0.2.0", "0.2.5":
		return V01, true
	case "0.3", "0.3.0":
		return V03, true
	case "1", "1.0", "1.0.0", "1.0.1":
		return V10, true
	}
	return "", false
}
