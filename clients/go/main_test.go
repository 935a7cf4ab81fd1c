package eslm_test

// The tests run against real Elasticsearch nodes with the lock manager plugin, never a mock:
// ESLM_URLS names them (comma-separated, e.g. http://127.0.0.1:9200). Without it every test of
// the package fails. tests/integration/test_go_client.py starts a node and runs them.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/elastic/go-elasticsearch/v9"

	eslm "github.com/eslm/elasticsearch-lock-manager/clients/go"
)

var urls []string

func TestMain(m *testing.M) {
	for _, u := range strings.Split(os.Getenv("ESLM_URLS"), ",") {
		if u = strings.TrimSpace(u); u != "" {
			urls = append(urls, u)
		}
	}
	if len(urls) == 0 {
		fmt.Fprintln(os.Stderr, "FAIL: ESLM_URLS is not set: these tests need real Elasticsearch nodes with the "+
			"lock manager plugin (comma-separated URLs, e.g. ESLM_URLS=http://127.0.0.1:9200)")
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// newES is an official client on the test nodes that leaves 503s to the lock client's own
// retries (as the README recommends).
func newES(t testing.TB) *elasticsearch.Client {
	t.Helper()
	es, err := elasticsearch.NewClient(elasticsearch.Config{Addresses: urls, RetryOnStatus: []int{502, 504}})
	if err != nil {
		t.Fatalf("elasticsearch client: %v", err)
	}
	return es
}

// logBuffer collects the client's log lines for a test.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.buf.String(), s)
}

// newClient is a lock client for one test, closed at its end; its log goes to the test's log
// buffer too.
func newClient(t testing.TB, opts ...eslm.ClientOption) (*eslm.Client, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	logger := slog.New(slog.NewTextHandler(io.MultiWriter(logs, testWriter{t}), &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := eslm.NewClient(newES(t), append([]eslm.ClientOption{eslm.WithLogger(logger)}, opts...)...)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = c.Close(ctx)
	})
	return c, logs
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// unique is a key (or name) no other test uses.
func unique(t testing.TB) string {
	name := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	return fmt.Sprintf("go-%s-%08x", strings.ToLower(name), rand.Uint32())
}

// rest sends one request straight to the first node (not through the client under test) and
// answers the status and the decoded body.
func rest(t testing.TB, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var reader io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		reader = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, urls[0]+path, reader)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	out := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	_ = dec.Decode(&out)
	return res.StatusCode, out
}

// holders are the holders of key (scope "key", or "tree").
func holders(t testing.TB, key string) []map[string]any {
	t.Helper()
	status, body := rest(t, "GET", "/_locks/"+pathEscape(key), nil)
	if status != 200 {
		t.Fatalf("GET %s: %d %v", key, status, body)
	}
	var out []map[string]any
	for _, h := range body["holders"].([]any) {
		out = append(out, h.(map[string]any))
	}
	return out
}

func waiters(t testing.TB, key string) int {
	t.Helper()
	_, body := rest(t, "GET", "/_locks/"+pathEscape(key), nil)
	w, _ := body["waiters"].([]any)
	return len(w)
}

func pathEscape(s string) string { return strings.ReplaceAll(s, "/", "%2F") }

func forceRelease(t testing.TB, key, scope string) {
	t.Helper()
	status, body := rest(t, "POST", "/_locks/"+pathEscape(key)+"/_force_release", map[string]any{"scope": scope, "reason": "test"})
	if status != 200 {
		t.Fatalf("force-release of %s: %d %v", key, status, body)
	}
}

// awaitTrue waits until cond holds, checking every 20 ms, for at most within.
func awaitTrue(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// closedWithin reports whether ch closes within d (and how long it took).
func closedWithin(ch <-chan struct{}, d time.Duration) (bool, time.Duration) {
	start := time.Now()
	select {
	case <-ch:
		return true, 0
	default:
	}
	select {
	case <-ch:
		return true, time.Since(start)
	case <-time.After(d):
		return false, d
	}
}

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func tokenOf(h map[string]any) uint64 {
	n, _ := h["fencing_token"].(json.Number)
	var v uint64
	fmt.Sscan(n.String(), &v)
	return v
}
