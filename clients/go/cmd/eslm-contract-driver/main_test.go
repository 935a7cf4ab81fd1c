package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	eslm "github.com/eslm/elasticsearch-lock-manager/clients/go"
)

// The driver against a real node (ESLM_URLS, required), commands piped in as the harness does.
func TestDriverSpeaksTheProtocol(t *testing.T) {
	urls := os.Getenv("ESLM_URLS")
	if urls == "" {
		t.Fatal("ESLM_URLS is not set: this test needs a real node with the lock manager plugin")
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	d := &driver{out: json.NewEncoder(outW), log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		clients: map[string]*eslm.Client{}, handles: map[string]*handle{}}
	exited := make(chan int, 1)
	go func() { exited <- d.run(inR); outW.Close() }()
	answers := bufio.NewScanner(outR)
	next := func() map[string]any {
		if !answers.Scan() {
			t.Fatal("the driver wrote no answer")
		}
		var a map[string]any
		if err := json.Unmarshal(answers.Bytes(), &a); err != nil {
			t.Fatalf("not JSON: %s", answers.Text())
		}
		return a
	}
	send := func(line string) map[string]any {
		fmt.Fprintln(inW, line)
		return next()
	}
	kind := func(a map[string]any) string {
		if e, ok := a["error"].(map[string]any); ok {
			return e["kind"].(string)
		}
		return ""
	}
	key := fmt.Sprintf("go-driver-%08x", rand.Uint32())
	first := strings.Split(urls, ",")[0]
	if a := send(`{"id":1,"cmd":"open","client":"a"}`); a["ok"] != true || a["id"] != 1.0 {
		t.Fatalf("open: %v", a)
	}
	held := send(fmt.Sprintf(`{"id":2,"cmd":"lock","client":"a","handle":"h","key":%q,"lease_ms":3000}`, key))
	if held["ok"] != true || held["token"].(float64) <= 0 {
		t.Fatalf("lock: %v", held)
	}
	if a := send(fmt.Sprintf(`{"id":3,"cmd":"lock","client":"a","handle":"x","key":%q,"try":true}`, key)); kind(a) != "conflict" {
		t.Fatalf("try-lock of a busy key: %v", a)
	}
	if a := send(fmt.Sprintf(`{"id":4,"cmd":"lock","client":"a","handle":"x","key":%q,"timeout_ms":200}`, key)); kind(a) != "wait_timeout" {
		t.Fatalf("a timeout: %v", a)
	}
	if a := send(`{"id":5,"cmd":"lock_again","handle":"h"}`); a["token"] != held["token"] {
		t.Fatalf("the same acquisition again: %v", a)
	}
	fmt.Fprintln(inW, `{"id":6,"cmd":"await_lost","handle":"h","within_ms":3000,"async":true}`)
	req, _ := http.NewRequest("POST", first+"/_locks/"+key+"/_force_release", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 200 {
		t.Fatalf("force-release: %v %v", res, err)
	}
	if a := next(); a["id"] != 6.0 || a["lost"] != true {
		t.Fatalf("await_lost: %v", a)
	}
	if a := send(`{"id":7,"cmd":"fenced_write","handle":"h","index":"go-driver","doc_id":"d","doc":{"a":1}}`); kind(a) != "lost" {
		t.Fatalf("a fenced write of a lost lock: %v", a)
	}
	if a := send(`{"id":8,"cmd":"unlock","handle":"h"}`); kind(a) != "lost" {
		t.Fatalf("unlock of a lost lock: %v", a)
	}
	if a := send(`{"id":20,"cmd":"unlock","handle":"h"}`); a["ok"] != true {
		t.Fatalf("a second unlock does nothing: %v", a)
	}
	for line, want := range map[string]string{
		`{"id":9,"cmd":"bogus"}`:                                                     "invalid_argument",
		`{"id":18,"cmd":"lock","client":"a","handle":"y","key":""}`:                  "invalid_argument",
		`{"id":19,"cmd":"unlock","handle":"no-such-handle"}`:                         "invalid_argument",
		`{"id":10,"cmd":"lock","client":"a","handle":"y"}`:                           "invalid_argument",
		`{"id":11,"cmd":"lock","client":"a","handle":"y","key":"k","lease_ms":-1}`:   "invalid_argument",
		`{"id":12,"cmd":"lock","client":"nobody","handle":"y","key":"k"}`:            "invalid_argument",
		`{"id":13,"cmd":"lock","client":"a","handle":"y","key":"k","mode":"weird"}`:  "invalid_argument",
		`{"id":14,"cmd":"lock","client":"a","handle":"y","key":"k","lease_ms":"1s"}`: "invalid_argument",
	} {
		if a := send(line); kind(a) != want {
			t.Fatalf("%s: want %s, got %v", line, want, a)
		}
	}
	if a := send(`{"id":15,"cmd":"close","client":"a"}`); a["ok"] != true {
		t.Fatalf("close: %v", a)
	}
	if a := send(`{"id":16,"cmd":"lock","client":"a","handle":"z","key":"k"}`); kind(a) != "closed" {
		t.Fatalf("lock after close: %v", a)
	}
	if a := send(`{"id":17,"cmd":"exit"}`); a["ok"] != true {
		t.Fatalf("exit: %v", a)
	}
	select {
	case code := <-exited:
		if code != 0 {
			t.Fatalf("exit code %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the driver did not end on exit")
	}
}
