package eslm_test

import (
	"context"
	"errors"
	"testing"
	"time"

	eslm "github.com/eslm/elasticsearch-lock-manager/clients/go"
)

func TestElectionCampaignObserveResign(t *testing.T) {
	c, _ := newClient(t)
	name := unique(t)
	ctx := ctxFor(t, 40*time.Second)
	first, second := eslm.NewElection(c, name), eslm.NewElection(c, name)
	if _, err := first.Leader(ctx); !errors.Is(err, eslm.ErrNoLeader) {
		t.Fatalf("no leader yet: %v", err)
	}
	observeCtx, stopObserving := context.WithCancel(ctx)
	observed := eslm.NewElection(c, name).Observe(observeCtx)
	if err := first.Campaign(ctx, "10.0.0.1:8080"); err != nil {
		t.Fatal(err)
	}
	leader, err := second.Leader(ctx)
	if err != nil || leader.Leader != first.Candidate() || leader.Value != "10.0.0.1:8080" || leader.Term != first.Term() {
		t.Fatalf("Leader: %+v %v (term %d)", leader, err, first.Term())
	}
	if got := <-observed; got.Term != first.Term() || got.Value != "10.0.0.1:8080" {
		t.Fatalf("observed %+v", got)
	}
	if err := second.TryCampaign(ctx, "x"); !errors.Is(err, eslm.ErrLocked) {
		t.Fatalf("someone leads: %v", err)
	}
	elected := make(chan error, 1)
	go func() { elected <- second.Campaign(ctx, "10.0.0.2:8080") }()
	awaitTrue(t, 10*time.Second, "the second candidate queued", func() bool {
		l, _ := first.Leader(ctx)
		return l != nil && len(l.Candidates) == 1
	})
	if err := first.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-elected; err != nil {
		t.Fatal(err)
	}
	if second.Term() <= first.Term() {
		t.Fatalf("terms grow: %d then %d", first.Term(), second.Term())
	}
	if got := <-observed; got.Term != second.Term() || got.Leader != second.Candidate() {
		t.Fatalf("observed %+v, want the second leader", got)
	}
	// A leadership ended by the server is lost: Done closes, fenced writes are refused.
	done := second.Done()
	forceRelease(t, name, "election")
	if ok, _ := closedWithin(done, 5*time.Second); !ok || !errors.Is(second.Err(), eslm.ErrLost) {
		t.Fatalf("the deposed leader knows: %v", second.Err())
	}
	if _, err := second.Index(ctx, "go-client-elections", name, map[string]any{"by": "deposed"}); !errors.Is(err, eslm.ErrLost) {
		t.Fatalf("a fenced write of a lost leadership: %v", err)
	}
	if err := second.Resign(ctx); !errors.Is(err, eslm.ErrLost) {
		t.Fatalf("Resign of a lost leadership: %v", err)
	}
	stopObserving()
	for range observed { // closed once its context ends
	}
}
