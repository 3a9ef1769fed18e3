package app

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/a2arelay/relay/internal/config"
)

// A body over the limit is answered 413 before it is read. The client is
// still writing it then; the relay must read and drop what follows rather
// than close on unread input, which makes the kernel send a reset that
// destroys the 413 on its way to the client.
func TestOversizedBodyGets413NotAReset(t *testing.T) {
	t.Parallel()
	r := startRelay(t, func(c *config.Config) { c.MaxBodyBytes = 64 << 10 })
	body := `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"` + strings.Repeat("x", 400<<10) + `"}}`
	for i := range 20 {
		client := &http.Client{Transport: &http.Transport{}} // a new connection each time
		res, err := client.Post(r.url+"/", "application/json", bytes.NewReader([]byte(body)))
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		raw, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatalf("request %d: reading the answer: %v", i, err)
		}
		if res.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("request %d: status %d, want 413", i, res.StatusCode)
		}
		var rpc struct {
			Error struct{ Code int } `json:"error"`
		}
		if err := json.Unmarshal(raw, &rpc); err != nil || rpc.Error.Code != -32600 {
			t.Fatalf("request %d: answer %s, want a JSON-RPC -32600 error", i, raw)
		}
		client.CloseIdleConnections()
	}
}

// A chunked body (no Content-Length) over the limit gets the same 413 with a
// JSON-RPC error body.
func TestOversizedChunkedBodyGets413WithAJSONRPCError(t *testing.T) {
	t.Parallel()
	r := startRelay(t, func(c *config.Config) { c.MaxBodyBytes = 64 << 10 })
	body := `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"` + strings.Repeat("x", 200<<10) + `"}}`
	// An io.Reader of unknown length makes net/http send the body chunked.
	req, err := http.NewRequest(http.MethodPost, r.url+"/", io.MultiReader(strings.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if len(req.TransferEncoding) == 0 && req.ContentLength > 0 {
		t.Fatalf("the request was not sent chunked (%d bytes announced)", req.ContentLength)
	}
	var rpc struct {
		RPC   string `json:"jsonrpc"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if res.StatusCode != http.StatusRequestEntityTooLarge || json.Unmarshal(raw, &rpc) != nil || rpc.RPC != "2.0" || rpc.Error.Code != -32600 ||
		!strings.Contains(rpc.Error.Message, "65536") {
		t.Fatalf("status %d, answer %s: want 413 with a JSON-RPC -32600 error naming the limit", res.StatusCode, raw)
	}
}

// The repro: a client that writes its whole body before it reads
// the answer (Node's http client does) sends 16 MiB over a limit of 64 KiB.
// fasthttp answers 413 from the Content-Length, unread; the relay must
// read and drop all of the rest, or the client's write fails on a reset
// (Node: EPIPE or ECONNRESET) and it never reads the 413.
func TestOversizedBodyWrittenWholeBeforeReadingGets413(t *testing.T) {
	t.Parallel()
	r := startRelay(t, func(c *config.Config) { c.MaxBodyBytes = 64 << 10 })
	conn, err := net.Dial("tcp", strings.TrimPrefix(r.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := bytes.Repeat([]byte("a"), 16<<20)
	head := "POST / HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	if _, err := conn.Write(append([]byte(head), body...)); err != nil {
		t.Fatalf("writing the body: %v (the relay closed on it unread)", err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	defer res.Body.Close()
	if raw, _ := io.ReadAll(res.Body); res.StatusCode != http.StatusRequestEntityTooLarge || !bytes.Contains(raw, []byte("-32600")) {
		t.Fatalf("status %d, answer %s: want 413 with a JSON-RPC error", res.StatusCode, raw)
	}
}
