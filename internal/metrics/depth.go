package metrics

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// depthCollector reads the delivery backlog from Redis when scraped.
type depthCollector struct {
	d   Depther
	log *slog.Logger
}

var (
	depthDesc = prometheus.NewDesc("relay_delivery_queue_depth",
		"Delivery tokens per partition and state: waiting (not read by a worker yet), inflight, retrying (in the retry set), dead (dead letters kept).",
		[]string{"partition", "state"}, nil)
	oldestDesc = prometheus.NewDesc("relay_delivery_oldest_pending_seconds",
		"Age of the oldest delivery token of a partition not finished yet (0: none).", []string{"partition"}, nil)
	depthUp = prometheus.NewDesc("relay_delivery_queue_depth_up",
		"1 when the last scrape could read the delivery backlog from Redis.", nil, nil)
)

func (c *depthCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- depthDesc
	ch <- oldestDesc
	ch <- depthUp
}

func (c *depthCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ds, err := c.d.Depths(ctx)
	if err != nil {
		c.log.Warn("metrics: reading the delivery backlog", "err", err)
		ch <- prometheus.MustNewConstMetric(depthUp, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(depthUp, prometheus.GaugeValue, 1)
	for p, d := range ds {
		part := strconv.Itoa(p)
		for state, v := range map[string]int64{"waiting": d.Waiting, "inflight": d.InFlight, "retrying": d.Retrying, "dead": d.Dead} {
			ch <- prometheus.MustNewConstMetric(depthDesc, prometheus.GaugeValue, float64(v), part, state)
		}
		ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, d.OldestPending.Seconds(), part)
	}
}
