package web

import (
	"fmt"
	"sync"
	"time"
)

// loginThrottle bounds password guessing at the console (R-P2) without
// letting one client lock everyone else out:
//
//   - Per user name: userFailures failed logins within userWindow lock
//     that name until the oldest of them ages out. Other names, from the
//     same address or any other, are not affected; a successful login
//     clears its name's failures.
//   - Per client address: a leaky bucket of failed logins (addrBurst at
//     once, one more every addrRefill) slows a client that guesses across
//     many names to a trickle. It never locks the address out for long: a
//     refused client may try again after addrRefill.
//
// Both tables are bounded (maxTracked entries each; the stalest goes
// first), so guessing with endless names or addresses cannot grow them.
type loginThrottle struct {
	mu     sync.Mutex
	byUser map[string][]time.Time
	byAddr map[string]*leakyBucket
}

const (
	userFailures = 10
	userWindow   = 5 * time.Minute
	addrBurst    = 30
	addrRefill   = 2 * time.Second
	maxTracked   = 10000
	// maxNameKey bounds the bytes of a user name kept as a key (role
	// names are at most 63 bytes).
	maxNameKey = 128
)

// leakyBucket holds the failures an address may still make: tokens at
// time at, refilled one per addrRefill up to addrBurst.
type leakyBucket struct {
	tokens float64
	at     time.Time
}

func (b *leakyBucket) level(now time.Time) float64 {
	return min(float64(addrBurst), b.tokens+float64(now.Sub(b.at))/float64(addrRefill))
}

func newLoginThrottle() *loginThrottle {
	return &loginThrottle{byUser: map[string][]time.Time{}, byAddr: map[string]*leakyBucket{}}
}

// refusal says why a login attempt was refused before its password was
// checked, for the login page.
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }

// allow reports whether user may try a password from addr now; nil means
// yes.
func (t *loginThrottle) allow(user, addr string, now time.Time) *refusal {
	user = nameKey(user)
	t.mu.Lock()
	defer t.mu.Unlock()
	if b := t.byAddr[addr]; b != nil && b.level(now) < 1 {
		return &refusal{fmt.Sprintf("Too many failed logins from %s; wait a few seconds and try again.", addr)}
	}
	if recent := t.recentLocked(user, now); len(recent) >= userFailures {
		wait := recent[0].Add(userWindow).Sub(now).Round(time.Second)
		return &refusal{fmt.Sprintf("Too many failed logins for this user name; try again in %s.", wait)}
	}
	return nil
}

// failed records a failed login of user from addr.
func (t *loginThrottle) failed(user, addr string, now time.Time) {
	user = nameKey(user)
	t.mu.Lock()
	defer t.mu.Unlock()
	recent := t.recentLocked(user, now)
	if _, ok := t.byUser[user]; !ok && len(t.byUser) >= maxTracked {
		t.pruneUsersLocked(now)
	}
	t.byUser[user] = append(recent, now)
	b := t.byAddr[addr]
	if b == nil {
		if len(t.byAddr) >= maxTracked {
			t.pruneAddrsLocked(now)
		}
		b = &leakyBucket{tokens: addrBurst, at: now}
		t.byAddr[addr] = b
	}
	b.tokens, b.at = max(0, b.level(now)-1), now
}

// succeeded clears user's failures.
func (t *loginThrottle) succeeded(user string) {
	t.mu.Lock()
	delete(t.byUser, nameKey(user))
	t.mu.Unlock()
}

// recentLocked is user's failures within the window, oldest first.
func (t *loginThrottle) recentLocked(user string, now time.Time) []time.Time {
	all := t.byUser[user]
	i := 0
	for i < len(all) && now.Sub(all[i]) >= userWindow {
		i++
	}
	return all[i:len(all):len(all)]
}

// pruneUsersLocked drops the names without a failure in the window and,
// when none is that old, the name whose last failure is the oldest.
func (t *loginThrottle) pruneUsersLocked(now time.Time) {
	var stalest string
	var stalestAt time.Time
	for u, fs := range t.byUser {
		last := fs[len(fs)-1]
		if now.Sub(last) >= userWindow {
			delete(t.byUser, u)
			continue
		}
		if stalestAt.IsZero() || last.Before(stalestAt) {
			stalest, stalestAt = u, last
		}
	}
	if len(t.byUser) >= maxTracked {
		delete(t.byUser, stalest)
	}
}

// pruneAddrsLocked drops the addresses whose bucket is full again and,
// when none is, the one that failed longest ago.
func (t *loginThrottle) pruneAddrsLocked(now time.Time) {
	var stalest string
	var stalestAt time.Time
	for a, b := range t.byAddr {
		if b.level(now) >= addrBurst {
			delete(t.byAddr, a)
			continue
		}
		if stalestAt.IsZero() || b.at.Before(stalestAt) {
			stalest, stalestAt = a, b.at
		}
	}
	if len(t.byAddr) >= maxTracked {
		delete(t.byAddr, stalest)
	}
}

func nameKey(user string) string {
	if len(user) > maxNameKey {
		return user[:maxNameKey]
	}
	return user
}
