// Package eslm is the Go client of the Elasticsearch Lock Manager plugin: cluster-wide locks,
// read/write locks, semaphores, sessions and leader elections over the plugin's REST endpoints
// (docs/API.md), in the manner of etcd's client/v3/concurrency package.
//
// Every request goes through the user's own go-elasticsearch client (its Perform), so its
// authentication, TLS and node pool apply:
//
//	es, _ := elasticsearch.NewClient(elasticsearch.Config{Addresses: []string{"http://127.0.0.1:9200"},
//		RetryOnStatus: []int{502, 504}})
//	locks, _ := eslm.NewClient(es)
//	defer locks.Close(ctx)
//	m := eslm.NewMutex(locks, "orders-42")
//	if err := m.Lock(ctx); err != nil { ... }   // waits until granted; ctx bounds the wait
//	... m.Token() fences the writes it protects; <-m.Done() when the lock is lost ...
//	err := m.Unlock(ctx)                         // errors.Is(err, eslm.ErrLost) if it was lost
//
// Every grant has a fencing token that only grows per key; a watchdog renews its lease every
// lease/3 while it is held and a long poll watches for its loss; each Lock is an acquisition of
// its own, retried under the same acquisition id, and released by token and id so a late
// release never ends a newer grant. Errors are *Error values matching the sentinels (ErrLocked,
// ErrWaitTimeout, ErrNotHeld, ErrLost, ErrUnavailable, ...) with errors.Is. A 503 is retried
// within each call's budget: its context's deadline, else the client's WithRetryFor.
package eslm
