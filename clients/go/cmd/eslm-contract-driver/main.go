// Command eslm-contract-driver is the Go client's driver of the client contract
// (tests/contract/PROTOCOL.md): it reads commands as JSON lines on standard input, performs each
// through the eslm package's public API and writes one JSON line per command on standard
// output. It holds no lock logic of its own: it maps a command to the client's call and the
// client's error to a kind. It logs to standard error and ends when its input closes or on
// "exit", after closing its clients.
//
//	ESLM_URLS=http://127.0.0.1:9200 go run ./cmd/eslm-contract-driver
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/elastic/go-elasticsearch/v9"

	eslm "github.com/eslm/elasticsearch-lock-manager/clients/go"
)

// message is one command: its id, name, async flag and arguments (all of the object).
type message struct {
	ID    json.RawMessage
	Cmd   string
	Async bool
	Args  map[string]json.RawMessage
}

// failure is an error answer of a given kind.
type failure struct {
	kind, message string
}

func (f *failure) Error() string { return f.message }

func invalid(format string, args ...any) error {
	return &failure{"invalid_argument", fmt.Sprintf(format, args...)}
}

type handle struct {
	client string
	m      *eslm.Mutex
}

type driver struct {
	out     *json.Encoder
	outMu   sync.Mutex
	log     *slog.Logger
	mu      sync.Mutex
	clients map[string]*eslm.Client
	handles map[string]*handle
	running sync.WaitGroup
}

func main() {
	d := &driver{
		out:     json.NewEncoder(os.Stdout),
		log:     slog.New(slog.NewTextHandler(os.Stderr, nil)),
		clients: map[string]*eslm.Client{},
		handles: map[string]*handle{},
	}
	os.Exit(d.run(os.Stdin))
}

func (d *driver) run(in io.Reader) int {
	lines := bufio.NewReader(in)
	for {
		line, err := lines.ReadString('\n')
		if strings.TrimSpace(line) != "" {
			msg, perr := parse(line)
			switch {
			case perr != nil:
				d.answer(msg.ID, nil, perr)
			case msg.Cmd == "exit":
				d.closeAll() // which ends the commands still running
				d.running.Wait()
				d.answer(msg.ID, map[string]any{}, nil)
				return 0
			case msg.Async:
				d.running.Add(1)
				go func() {
					defer d.running.Done()
					d.perform(msg)
				}()
			default:
				d.perform(msg)
			}
		}
		if err != nil {
			if err != io.EOF {
				d.log.Error("reading standard input", "error", err)
			}
			d.closeAll()
			d.running.Wait()
			return 0
		}
	}
}

func parse(line string) (message, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &all); err != nil {
		return message{ID: json.RawMessage("null")}, invalid("not a JSON object: %v", err)
	}
	msg := message{ID: all["id"], Args: all}
	if msg.ID == nil {
		msg.ID = json.RawMessage("null")
	}
	if err := json.Unmarshal(all["cmd"], &msg.Cmd); err != nil || msg.Cmd == "" {
		return msg, invalid("[cmd] is required")
	}
	if raw, ok := all["async"]; ok {
		if err := json.Unmarshal(raw, &msg.Async); err != nil {
			return msg, invalid("[async] must be a boolean")
		}
	}
	return msg, nil
}

func (d *driver) perform(msg message) {
	result, err := d.dispatch(msg)
	d.answer(msg.ID, result, err)
}

func (d *driver) answer(id json.RawMessage, result map[string]any, err error) {
	reply := map[string]any{"id": id}
	if err != nil {
		kind, text := kindOf(err)
		reply["ok"] = false
		reply["error"] = map[string]any{"kind": kind, "message": text}
	} else {
		reply["ok"] = true
		for k, v := range result {
			reply[k] = v
		}
	}
	d.outMu.Lock()
	defer d.outMu.Unlock()
	if err := d.out.Encode(reply); err != nil {
		d.log.Error("writing an answer", "error", err)
	}
}

// kindOf maps the client's error to the protocol's kind.
func kindOf(err error) (string, string) {
	var f *failure
	if errors.As(err, &f) {
		return f.kind, f.message
	}
	kinds := []struct {
		sentinel error
		kind     string
	}{
		{eslm.ErrClosed, "closed"},
		{eslm.ErrInvalidArgument, "invalid_argument"},
		{eslm.ErrBadRequest, "invalid_argument"},
		{eslm.ErrStaleToken, "stale_token"},
		{eslm.ErrLost, "lost"},
		{eslm.ErrLocked, "conflict"},
		{eslm.ErrWaitTimeout, "wait_timeout"},
		{eslm.ErrNotHeld, "not_held"},
		{eslm.ErrUnavailable, "unavailable"},
	}
	for _, k := range kinds {
		if errors.Is(err, k.sentinel) {
			return k.kind, err.Error()
		}
	}
	return "other", err.Error()
}

// --- arguments -------------------------------------------------------------------------------

func str(msg message, name string) (string, error) {
	raw, ok := msg.Args[name]
	var s string
	if !ok || json.Unmarshal(raw, &s) != nil || s == "" {
		return "", invalid("[%s] is required (a non-empty string)", name)
	}
	return s, nil
}

// optInt is an optional integer argument; absent or null: ok false.
func optInt(msg message, name string) (int64, bool, error) {
	raw, ok := msg.Args[name]
	if !ok || string(raw) == "null" {
		return 0, false, nil
	}
	var n int64
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, false, invalid("[%s] must be an integer", name)
	}
	return n, true, nil
}

func optBool(msg message, name string, def bool) (bool, error) {
	raw, ok := msg.Args[name]
	if !ok || string(raw) == "null" {
		return def, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return def, invalid("[%s] must be a boolean", name)
	}
	return b, nil
}

func (d *driver) client(msg message) (string, *eslm.Client, error) {
	name, err := str(msg, "client")
	if err != nil {
		return "", nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	c, ok := d.clients[name]
	if !ok {
		return "", nil, invalid("no client [%s] was opened", name)
	}
	return name, c, nil
}

func (d *driver) handle(msg message) (*eslm.Mutex, error) {
	name, err := str(msg, "handle")
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	h, ok := d.handles[name]
	if !ok {
		return nil, invalid("no handle [%s]", name)
	}
	return h.m, nil
}

// --- commands --------------------------------------------------------------------------------

func (d *driver) dispatch(msg message) (map[string]any, error) {
	ctx := context.Background()
	switch msg.Cmd {
	case "open":
		return d.open(msg)
	case "lock":
		return d.lock(ctx, msg)
	case "lock_again":
		m, err := d.handle(msg)
		if err != nil {
			return nil, err
		}
		if err := m.Reacquire(ctx); err != nil {
			return nil, err
		}
		return map[string]any{"token": m.Token()}, nil
	case "unlock":
		m, err := d.handle(msg)
		if err != nil {
			return nil, err
		}
		return map[string]any{}, m.Unlock(ctx)
	case "renew":
		m, err := d.handle(msg)
		if err != nil {
			return nil, err
		}
		lease, _, err := optInt(msg, "lease_ms")
		if err != nil {
			return nil, err
		}
		return map[string]any{}, m.Renew(ctx, time.Duration(lease)*time.Millisecond)
	case "lost":
		m, err := d.handle(msg)
		if err != nil {
			return nil, err
		}
		return map[string]any{"lost": m.Err() != nil}, nil
	case "await_lost":
		return d.awaitLost(msg)
	case "fenced_write":
		return d.fencedWrite(ctx, msg)
	case "fenced_update":
		return d.fencedUpdate(ctx, msg)
	case "close":
		name, c, err := d.client(msg)
		if err != nil {
			return nil, err
		}
		d.log.Info("closing client", "client", name)
		return map[string]any{}, c.Close(ctx)
	default:
		return nil, invalid("unknown command [%s]", msg.Cmd)
	}
}

func (d *driver) open(msg message) (map[string]any, error) {
	name, err := str(msg, "client")
	if err != nil {
		return nil, err
	}
	urls := strings.Split(os.Getenv("ESLM_URLS"), ",")
	if raw, ok := msg.Args["urls"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &urls); err != nil || len(urls) == 0 {
			return nil, invalid("[urls] must be a non-empty list of URLs")
		}
	}
	var addresses []string
	for _, u := range urls {
		if u = strings.TrimSpace(u); u != "" {
			addresses = append(addresses, u)
		}
	}
	if len(addresses) == 0 {
		return nil, invalid("no node URL: give [urls] or set ESLM_URLS")
	}
	// 503s are left to the lock client's own retries, within each call's budget.
	es, err := elasticsearch.NewClient(elasticsearch.Config{Addresses: addresses, RetryOnStatus: []int{502, 504}})
	if err != nil {
		return nil, invalid("elasticsearch client: %v", err)
	}
	opts := []eslm.ClientOption{eslm.WithLogger(d.log)}
	if ms, ok, err := optInt(msg, "retry_for_ms"); err != nil {
		return nil, err
	} else if ok {
		opts = append(opts, eslm.WithRetryFor(time.Duration(ms)*time.Millisecond))
	}
	c, err := eslm.NewClient(es, opts...)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	old := d.clients[name]
	d.clients[name] = c
	d.mu.Unlock()
	if old != nil {
		_ = old.Close(context.Background())
	}
	return map[string]any{}, nil
}

func (d *driver) lock(ctx context.Context, msg message) (map[string]any, error) {
	clientName, c, err := d.client(msg)
	if err != nil {
		return nil, err
	}
	handleName, err := str(msg, "handle")
	if err != nil {
		return nil, err
	}
	// A key that is there but empty is the client's to refuse (before sending).
	var key string
	if raw, ok := msg.Args["key"]; !ok || json.Unmarshal(raw, &key) != nil {
		return nil, invalid("[key] is required (a string)")
	}
	var opts []eslm.Option
	if lease, ok, err := optInt(msg, "lease_ms"); err != nil {
		return nil, err
	} else if ok {
		opts = append(opts, eslm.WithLease(time.Duration(lease)*time.Millisecond))
	}
	if raw, ok := msg.Args["mode"]; ok && string(raw) != "null" {
		var mode string
		_ = json.Unmarshal(raw, &mode)
		switch mode {
		case "exclusive":
		case "shared":
			opts = append(opts, eslm.WithShared())
		default:
			return nil, invalid("[mode] must be exclusive or shared, got %s", raw)
		}
	}
	keepAlive, err := optBool(msg, "keepalive", true)
	if err != nil {
		return nil, err
	}
	if !keepAlive {
		opts = append(opts, eslm.WithoutKeepAlive())
	}
	try, err := optBool(msg, "try", false)
	if err != nil {
		return nil, err
	}
	timeout, hasTimeout, err := optInt(msg, "timeout_ms")
	if err != nil {
		return nil, err
	}
	if hasTimeout && timeout < 0 {
		return nil, invalid("[timeout_ms] must be >= 0")
	}
	m := eslm.NewMutex(c, key, opts...)
	switch {
	case try || (hasTimeout && timeout == 0): // no wait: one try
		err = m.TryLock(ctx)
	case hasTimeout:
		wait, cancel := context.WithTimeout(ctx, time.Duration(timeout)*time.Millisecond)
		defer cancel()
		err = m.Lock(wait)
	default:
		err = m.Lock(ctx)
	}
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.handles[handleName] = &handle{client: clientName, m: m}
	d.mu.Unlock()
	return map[string]any{"token": m.Token()}, nil
}

func (d *driver) awaitLost(msg message) (map[string]any, error) {
	m, err := d.handle(msg)
	if err != nil {
		return nil, err
	}
	within, ok, err := optInt(msg, "within_ms")
	if err != nil {
		return nil, err
	}
	if !ok || within < 0 {
		return nil, invalid("[within_ms] is required (>= 0)")
	}
	start := time.Now()
	timer := time.NewTimer(time.Duration(within) * time.Millisecond)
	defer timer.Stop()
	select {
	case <-m.Done():
		if m.Err() != nil {
			return map[string]any{"lost": true, "after_ms": time.Since(start).Milliseconds()}, nil
		}
		<-timer.C // let go on purpose: never lost
	case <-timer.C:
	}
	return map[string]any{"lost": false}, nil
}

func (d *driver) fencedWrite(ctx context.Context, msg message) (map[string]any, error) {
	m, err := d.handle(msg)
	if err != nil {
		return nil, err
	}
	index, err := str(msg, "index")
	if err != nil {
		return nil, err
	}
	// PROTOCOL.md names the document "id", as the message's own id is named: one JSON object
	// holds one "id", so the document's is "doc_id" when given, else the message's id.
	id, err := str(msg, "doc_id")
	if err != nil {
		id = strings.Trim(string(msg.ID), `"`)
		if id == "" || id == "null" {
			return nil, invalid("[doc_id] (or [id]) is required")
		}
	}
	var doc map[string]any
	if err := json.Unmarshal(msg.Args["doc"], &doc); err != nil || doc == nil {
		return nil, invalid("[doc] must be an object")
	}
	_, err = m.Index(ctx, index, id, doc)
	return map[string]any{}, err
}

func (d *driver) fencedUpdate(ctx context.Context, msg message) (map[string]any, error) {
	m, err := d.handle(msg)
	if err != nil {
		return nil, err
	}
	index, err := str(msg, "index")
	if err != nil {
		return nil, err
	}
	id, err := str(msg, "doc_id")
	if err != nil {
		var n json.Number
		if json.Unmarshal(msg.Args["doc_id"], &n) != nil {
			return nil, invalid("[doc_id] is required (a document id)")
		}
		id = n.String()
	}
	var entries []struct {
		Op    string          `json:"op"`
		Field string          `json:"field"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(msg.Args["ops"], &entries); err != nil || entries == nil {
		return nil, invalid("[ops] is required (a list of field operations)")
	}
	var ops []eslm.FieldOp
	for _, e := range entries {
		var value any
		if e.Value != nil {
			if err := json.Unmarshal(e.Value, &value); err != nil {
				return nil, invalid("[ops] [value] of [%s]: %v", e.Op, err)
			}
		}
		switch e.Op {
		case "inc":
			by, ok := value.(float64)
			if !ok {
				return nil, invalid("[ops] [value] of [inc] must be a number, got %s", e.Value)
			}
			ops = append(ops, eslm.Inc(e.Field, by))
		case "append":
			ops = append(ops, eslm.Append(e.Field, value))
		case "set":
			ops = append(ops, eslm.Set(e.Field, value))
		case "remove":
			ops = append(ops, eslm.Remove(e.Field))
		default:
			return nil, invalid("[ops] op must be inc, append, set or remove, got [%s]", e.Op)
		}
	}
	doc, err := m.Update(ctx, index, id, eslm.Ops(ops...))
	if err != nil {
		return nil, err
	}
	return map[string]any{"doc": doc}, nil
}

func (d *driver) closeAll() {
	d.mu.Lock()
	clients := make([]*eslm.Client, 0, len(d.clients))
	for _, c := range d.clients {
		clients = append(clients, c)
	}
	d.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, c := range clients {
		if err := c.Close(ctx); err != nil {
			d.log.Warn("closing a client", "error", err)
		}
	}
}
