package ingest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/taskstore"
	"github.com/a2arelay/relay/internal/tenant"
)

// normalizePush fills a config's task id and, when missing, its id: the task
// id in v0.1 and v0.3 (the SDK convention), a fresh UUID in v1.0.
func normalizePush(c a2a.PushConfig, taskID string, d a2a.Dialect, owner string) a2a.PushConfig {
	c.TaskID = taskID
	c.Dialect = d
	c.Owner = owner
	if c.ID == "" {
		if d == a2a.V10 {
			c.ID = uuid.NewString()
		} else {
			c.ID = taskID
		}
	}
	return c
}

// SetPushConfig stores (or replaces) a push config of an existing task.
func (s *Service) SetPushConfig(ctx context.Context, c a2a.PushConfig) (a2a.PushConfig, error) {
	if c.TaskID == "" {
		return c, a2a.InvalidParams("taskId is required")
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	if err := s.checkPushURL(c.URL); err != nil {
		return c, err
	}
	if err := s.mustExist(ctx, c.TaskID); err != nil {
		return c, err
	}
	c = normalizePush(c, c.TaskID, c.Dialect, tenant.Owner(ctx))
	if err := s.storePush(ctx, c); err != nil {
		return c, err
	}
	return c, nil
}

// storePush seals a config's secrets and stores it.
func (s *Service) storePush(ctx context.Context, c a2a.PushConfig) error {
	sealed, err := a2a.SealPush(s.cfg.Secrets, c)
	if err != nil {
		return wrapStore("seal push config", err)
	}
	b, err := json.Marshal(sealed)
	if err != nil {
		return wrapStore("encode push config", err)
	}
	if err := s.admit(ctx, int64(len(c.ID)+len(b)), false); err != nil {
		return err
	}
	if err := s.commit.urls.IndexPushURL(ctx, c.URL, c.TaskID, c.ID, time.Now()); err != nil { // (the committer's index, which lists its commits' configs)
		return wrapStore("index push config", err)
	}
	switch err := s.store.SetPushConfig(ctx, tenant.Owner(ctx), c.TaskID, c.ID, b, acceptOf(c.Options), s.cfg.MaxPushConfigs); {
	case errors.Is(err, taskstore.ErrNotFound):
		return a2a.ErrTaskNotFound(c.TaskID)
	case errors.Is(err, taskstore.ErrFull):
		return a2a.InvalidParams("task %s already has %d push notification configs, the maximum", c.TaskID, s.cfg.MaxPushConfigs)
	case err != nil:
		return err
	}
	return nil
}

// resealPush stores c again with its secrets sealed by the current key,
// unless it was deleted meanwhile.
func (s *Service) resealPush(ctx context.Context, c a2a.PushConfig) error {
	sealed, err := a2a.SealPush(s.cfg.Secrets, c)
	if err != nil {
		return err
	}
	b, err := json.Marshal(sealed)
	if err != nil {
		return err
	}
	return s.store.ReplacePushConfig(ctx, c.TaskID, c.ID, b)
}

// openPush decodes a stored config and opens its secrets; one sealed with
// an older key (or stored before encryption was on) is sealed again with
// the current key and stored back: key rotation re-encrypts lazily.
func (s *Service) openPush(ctx context.Context, raw []byte) (a2a.PushConfig, error) {
	var c a2a.PushConfig
	if err := json.Unmarshal(raw, &c); err != nil {
		return c, wrapStore("decode push config", err)
	}
	c2, stale, err := a2a.OpenPush(s.cfg.Secrets, c)
	if err != nil {
		return c, wrapStore("open push config", err)
	}
	if stale && s.cfg.Secrets != nil {
		if err := s.resealPush(ctx, c2); err != nil {
			s.log.WarnContext(ctx, "re-encrypting a push config", "task_id", c.TaskID, "config_id", c.ID, "err", err)
		}
	}
	return c2, nil
}

// GetPushConfig returns one push config of a task.
func (s *Service) GetPushConfig(ctx context.Context, taskID, id string) (a2a.PushConfig, error) {
	if err := s.mustExist(ctx, taskID); err != nil {
		return a2a.PushConfig{}, err
	}
	b, err := s.store.PushConfig(ctx, taskID, cmp.Or(id, taskID))
	if errors.Is(err, taskstore.ErrNotFound) {
		return a2a.PushConfig{}, a2a.Errorf(a2a.KindTaskNotFound, "push notification config %q not found for task %s", cmp.Or(id, taskID), taskID)
	}
	if err != nil {
		return a2a.PushConfig{}, err
	}
	return s.openPush(ctx, b)
}

// ListPushConfigs returns every push config of a task, ordered by id.
func (s *Service) ListPushConfigs(ctx context.Context, taskID string) ([]a2a.PushConfig, error) {
	if err := s.mustExist(ctx, taskID); err != nil {
		return nil, err
	}
	m, err := s.store.PushConfigs(ctx, taskID)
	if err != nil {
		return nil, err
	}
	out := make([]a2a.PushConfig, 0, len(m))
	for _, v := range m {
		c, err := s.openPush(ctx, []byte(v))
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b a2a.PushConfig) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// DeletePushConfig removes a push config; deleting a missing one succeeds.
func (s *Service) DeletePushConfig(ctx context.Context, taskID, id string) error {
	if err := s.mustExist(ctx, taskID); err != nil {
		return err
	}
	return s.store.DeletePushConfig(ctx, taskID, cmp.Or(id, taskID))
}

func (s *Service) mustExist(ctx context.Context, taskID string) error {
	_, err := s.GetTask(ctx, taskID) // checks the owner too
	return err
}
