package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A full store gives way with the oldest session of the user holding the
// most: one user logging in over and over cannot push another's out.
func TestSessionStoreEvictsHeaviestUser(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st, err := newSessions(func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	st.max = 10
	admin := st.login(httptest.NewRecorder(), "admin")
	for i := 0; i < 100; i++ {
		now = now.Add(time.Second)
		st.login(httptest.NewRecorder(), "mallory")
	}
	if n := st.stored(); n != st.max {
		t.Fatalf("%d sessions stored, want %d", n, st.max)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.AddCookie(&http.Cookie{Name: sessionCookie, Value: admin.ID})
	if s := st.lookup(r); s.User() != "admin" {
		t.Fatalf("admin's session was evicted by mallory's logins")
	}
	// Anonymous cookies are never stored.
	for i := 0; i < 100; i++ {
		w := httptest.NewRecorder()
		if s := st.ensure(w, httptest.NewRequest("GET", "/login", nil)); s.User() != "" {
			t.Fatal(fmt.Sprint("an anonymous session has a user: ", s.User()))
		}
	}
	if n := st.stored(); n != st.max {
		t.Fatalf("anonymous visits changed the store: %d sessions", n)
	}
}
