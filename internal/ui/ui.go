// Package ui serves relay's operator page at /ui: plain HTML, CSS and
// JavaScript embedded in the binary, no build step and nothing fetched from
// anywhere but relay. The page reads and drives the management API
// (/v1/deliveries, /v1/stats/deliveries) with the admin token the operator
// types in; the files themselves hold no secret and are served to anyone.
package ui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"path"
	"strings"

	"github.com/gofiber/fiber/v2"
)

//go:embed static
var files embed.FS

// CSP is the Content-Security-Policy of every UI response: only relay's own
// scripts, styles and API; no inline script or style, no frames, no plugins,
// and Trusted Types enforced so no string can reach an HTML sink (innerHTML
// and the like throw).
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; " +
	"require-trusted-types-for 'script'; trusted-types 'none'"

// Cache-Control values: the page is revalidated on every load (it names the
// assets by content hash); an asset asked for by its current hash never
// changes, any other request for it revalidates.
const (
	cacheRevalidate = "no-cache"
	cacheImmutable  = "public, max-age=31536000, immutable"
)

var types = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
}

type asset struct {
	body  []byte
	ctype string
	hash  string // hex SHA-256, first 16 digits
}

// Handler serves the UI's files. Build one with New.
type Handler struct {
	assets map[string]asset
}

// New reads the embedded files. index.html's references to the other files
// get a ?v=<content hash> so browsers may cache those for good.
func New() *Handler {
	h := &Handler{assets: map[string]asset{}}
	err := fs.WalkDir(files, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, "static/")
		ct, ok := types[path.Ext(name)]
		if !ok {
			ct = "application/octet-stream"
		}
		h.assets[name] = asset{body: b, ctype: ct, hash: hash(b)}
		return nil
	})
	if err != nil {
		panic("ui: embedded files: " + err.Error()) // cannot happen: the files are compiled in
	}
	idx := h.assets["index.html"]
	for name, a := range h.assets {
		if name != "index.html" {
			idx.body = bytes.ReplaceAll(idx.body, []byte(`="`+name+`"`), []byte(`="`+name+"?v="+a.hash+`"`))
		}
	}
	idx.hash = hash(idx.body)
	h.assets["index.html"] = idx
	return h
}

func hash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:8])
}

// Register mounts the UI at /ui on r (GET and HEAD).
func Register(r fiber.Router) {
	h := New()
	r.Get("/ui", h.Serve)
	r.Get("/ui/*", h.Serve)
}

// Serve answers /ui (a redirect to /ui/), /ui/ (the page) and /ui/<file>.
func (h *Handler) Serve(c *fiber.Ctx) error {
	c.Set("Content-Security-Policy", CSP)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderReferrerPolicy, "no-referrer")
	c.Set(fiber.HeaderXFrameOptions, "DENY")
	c.Set("Cross-Origin-Opener-Policy", "same-origin")
	name := c.Params("*")
	if name == "" {
		if !strings.HasSuffix(c.Path(), "/") {
			// Relative, so that it also works behind a proxy that mounts relay
			// under a path of its own; the page's URLs are relative too.
			loc := "ui/"
			if q := c.Request().URI().QueryString(); len(q) > 0 {
				loc += "?" + string(q)
			}
			c.Set(fiber.HeaderCacheControl, cacheRevalidate)
			return c.Redirect(loc, fiber.StatusFound)
		}
		name = "index.html"
	}
	a, ok := h.assets[name]
	if !ok {
		c.Set(fiber.HeaderCacheControl, cacheRevalidate)
		return fiber.NewError(fiber.StatusNotFound, "no such file in the UI")
	}
	etag := `"` + a.hash + `"`
	c.Set(fiber.HeaderETag, etag)
	if name != "index.html" && c.Query("v") == a.hash {
		c.Set(fiber.HeaderCacheControl, cacheImmutable)
	} else {
		c.Set(fiber.HeaderCacheControl, cacheRevalidate)
	}
	c.Set(fiber.HeaderContentType, a.ctype)
	if matchETag(c.Get(fiber.HeaderIfNoneMatch), etag) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	return c.Send(a.body)
}

// matchETag reports whether an If-None-Match header names etag (weakly).
func matchETag(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}
