package app

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
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
