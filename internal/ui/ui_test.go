package ui

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
)

func testApp() *fiber.App {
	f := fiber.New(fiber.Config{DisableStartupMessage: true})
	Register(f)
	return f
}

func do(t *testing.T, f *fiber.App, method, target string, header ...string) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := f.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

func TestIndexHasStrictCSP(t *testing.T) {
	f := testApp()
	resp, body := do(t, f, http.MethodGet, "/ui/")
	if resp.StatusCode != 200 {
		t.Fatalf("GET /ui/: %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'self'", "script-src 'self'", "object-src 'none'", "frame-ancestors 'none'", "require-trusted-types-for 'script'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") || strings.Contains(csp, "http") {
		t.Errorf("CSP %q allows inline code or another origin", csp)
	}
	if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("headers %v", resp.Header)
	}
	if !strings.Contains(body, "<title>relay") {
		t.Errorf("body is not the page: %.200s", body)
	}
	// The page loads its own files only, by content hash, and holds no inline script or style.
	if !regexp.MustCompile(`<script src="app\.js\?v=[0-9a-f]{16}" defer></script>`).MatchString(body) {
		t.Errorf("script tag not rewritten to a hashed URL")
	}
	if !regexp.MustCompile(`href="app\.css\?v=[0-9a-f]{16}"`).MatchString(body) {
		t.Errorf("stylesheet not rewritten to a hashed URL")
	}
	if regexp.MustCompile(`<script>|<script [^>]*>[^<]|<style|style="|\son[a-z]+="|https?://`).MatchString(body) {
		t.Errorf("page has inline code, inline style or an external URL")
	}
	// HEAD answers alike without a body.
	if resp, body := do(t, f, http.MethodHead, "/ui/"); resp.StatusCode != 200 || body != "" || resp.Header.Get("Content-Security-Policy") != CSP {
		t.Errorf("HEAD /ui/: %d %q", resp.StatusCode, body)
	}
}

func TestUIRedirectsToTrailingSlash(t *testing.T) {
	resp, _ := do(t, testApp(), http.MethodGet, "/ui")
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "ui/" {
		t.Fatalf("GET /ui: %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

func TestAssetsTypesAndCaching(t *testing.T) {
	f := testApp()
	h := New()
	for name, ct := range map[string]string{
		"app.js":   "text/javascript; charset=utf-8",
		"app.css":  "text/css; charset=utf-8",
		"icon.svg": "image/svg+xml",
	} {
		resp, body := do(t, f, http.MethodGet, "/ui/"+name)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != ct || body == "" {
			t.Errorf("%s: %d %q (%d bytes)", name, resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
		}
		if resp.Header.Get("Cache-Control") != "no-cache" || resp.Header.Get("Content-Security-Policy") != CSP {
			t.Errorf("%s without its hash: headers %v", name, resp.Header)
		}
		resp, _ = do(t, f, http.MethodGet, "/ui/"+name+"?v="+h.assets[name].hash)
		if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
			t.Errorf("%s by hash: Cache-Control %q", name, cc)
		}
		etag := resp.Header.Get("ETag")
		if resp, body := do(t, f, http.MethodGet, "/ui/"+name, "If-None-Match", etag); resp.StatusCode != http.StatusNotModified || body != "" {
			t.Errorf("%s If-None-Match %s: %d", name, etag, resp.StatusCode)
		}
	}
}

func TestUnknownPathsAre404(t *testing.T) {
	f := testApp()
	for _, p := range []string{"/ui/nope.js", "/ui/static/app.js", "/ui/../go.mod", "/ui/index.html/x", "/ui/%2e%2e/ui.go"} {
		resp, _ := do(t, f, http.MethodGet, p)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, resp.StatusCode)
		}
		if resp.Header.Get("Content-Security-Policy") == "" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: headers %v", p, resp.Header)
		}
	}
	if resp, _ := do(t, f, http.MethodPost, "/ui/"); resp.StatusCode != http.StatusMethodNotAllowed && resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST /ui/: %d", resp.StatusCode)
	}
}

// The scripts render data as text only: no HTML sink, no eval.
func TestScriptUsesNoHTMLSinks(t *testing.T) {
	for _, name := range []string{"app.js", "endpoints.js"} {
		b, err := files.ReadFile("static/" + name)
		if err != nil {
			t.Fatal(err)
		}
		code := regexp.MustCompile(`(?m)^\s*//.*$`).ReplaceAllString(string(b), "")
		code = strings.ReplaceAll(code, "'http://www.w3.org/2000/svg'", "") // the SVG namespace, not a URL it loads
		for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "http://", "https://"} {
			if strings.Contains(code, bad) {
				t.Errorf("%s uses %s", name, bad)
			}
		}
	}
}
