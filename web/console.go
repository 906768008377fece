package web

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/server"
	"github.com/mvserver/mvserver/storage"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Backend is what the console reads and acts through.
type Backend struct {
	DB       *storage.DB
	Catalog  *catalog.Manager
	Database string
	// Engine opens the sessions the console's actions run in (invariant 2):
	// the engine the wire server uses.
	Engine server.Engine
	// NextRun is the scheduler's next time for a view, as DESCRIBE
	// EXTENDED shows it (nil: none).
	NextRun func(view uint32) (time.Time, bool)
	// Ready reports whether the server takes work (/readyz); nil = ready.
	Ready func() error
	// RequireRoles is set when clients authenticate: a console user then
	// has its role's privileges only (catalog.Catalog.Allowed).
	RequireRoles bool
}

// Config configures a Console.
type Config struct {
	// Addr is the host:port to listen on (Listen).
	Addr    string
	Backend Backend
	Monitor *Monitor
	// Auth decides who a request is; nil = LoopbackOnly{User: DefaultUser}.
	Auth   Authenticator
	Logger *slog.Logger
	// Now is the clock of pages (history windows); nil = time.Now.
	Now func() time.Time
	// ActionWait is how long a POST waits for its statement before the
	// page it returns says the statement is still running; 0 = 3s.
	ActionWait time.Duration
}

// Console serves the console, /metrics, /healthz and /readyz.
type Console struct {
	be      Backend
	mon     *Monitor
	auth    Authenticator
	log     *slog.Logger
	now     func() time.Time
	wait    time.Duration
	addr    string
	sess    *sessions
	pages   map[string]*template.Template
	handler http.Handler
	actions *actionLog

	// ctx is the parent of every action's statement: Shutdown cancels it.
	ctx     context.Context
	cancel  context.CancelFunc
	running sync.WaitGroup
	closing atomic.Bool

	srv    *http.Server
	ln     net.Listener
	served chan error
}

// New builds a console; Listen starts serving it.
func New(cfg Config) (*Console, error) {
	c := &Console{be: cfg.Backend, mon: cfg.Monitor, auth: cfg.Auth, log: cfg.Logger, now: cfg.Now, wait: cfg.ActionWait, addr: cfg.Addr,
		actions: newActionLog(200)}
	if c.mon == nil {
		c.mon = NewMonitor(nil)
	}
	if c.auth == nil {
		c.auth = LoopbackOnly{User: DefaultUser}
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.wait <= 0 {
		c.wait = 3 * time.Second
	}
	var err error
	if c.sess, err = newSessions(c.now); err != nil {
		return nil, err
	}
	if c.pages, err = parsePages(); err != nil {
		return nil, err
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.handler = c.routes()
	return c, nil
}

// Handler is the console's whole HTTP handler.
func (c *Console) Handler() http.Handler { return c.handler }

// Listen listens on the configured address and serves in the background.
func (c *Console) Listen() error {
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return fmt.Errorf("listen on %s (--http): %w", c.addr, err)
	}
	c.ln = ln
	c.srv = &http.Server{Handler: c.handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(c.log.Handler(), slog.LevelWarn)}
	c.served = make(chan error, 1)
	go func() { c.served <- c.srv.Serve(ln) }()
	return nil
}

// Addr is the address the console listens on (nil before Listen).
func (c *Console) Addr() net.Addr {
	if c.ln == nil {
		return nil
	}
	return c.ln.Addr()
}

// Shutdown stops serving, cancels the statements of running actions and
// waits for them (a canceled REFRESH changes nothing, R-S5).
func (c *Console) Shutdown(ctx context.Context) error {
	c.closing.Store(true)
	// Cancel first: a POST waiting for its statement then answers at once,
	// and new ones are refused (closing).
	c.cancel()
	var err error
	if c.srv != nil {
		err = c.srv.Shutdown(ctx)
		if errors.Is(err, context.DeadlineExceeded) {
			err = c.srv.Close()
		}
		if serr := <-c.served; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
			err = serr
		}
	}
	c.running.Wait()
	return err
}

func (c *Console) routes() http.Handler {
	mux := http.NewServeMux()
	// Probes and metrics: no session, no user.
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", c.readyz)
	mux.Handle("GET /metrics", c.mon.Handler())
	static, _ := fs.Sub(staticFS, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", staticHandler(static)))
	// The console.
	mux.HandleFunc("GET /login", c.login)
	mux.HandleFunc("POST /login", c.login)
	mux.HandleFunc("POST /logout", c.logout)
	mux.Handle("GET /{$}", c.page(c.overview))
	mux.Handle("GET /datasets/{schema}/{name}", c.page(c.dataset))
	mux.Handle("POST /datasets/{schema}/{name}/{action}", c.page(c.action))
	mux.Handle("/", c.page(func(w http.ResponseWriter, r *http.Request, rq *request) {
		c.fail(w, r, rq, http.StatusNotFound, "There is no page at "+r.URL.Path+".")
	}))
	return c.guard(mux)
}

// guard applies to every request: loopback peers only (the connection's
// address, not anything the client sends), through a loopback host name,
// and the headers that keep pages to themselves. The console has no HTTPS
// of its own: a password or session cookie must not cross the network in
// clear, so with a login as without one it answers only this machine,
// whatever address --http listens on.
func (c *Console) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		if !loopbackRemote(r.RemoteAddr) {
			refuse(w, http.StatusForbidden, fmt.Sprintf("mvserver serves its console, /metrics and probes only to clients on this machine (loopback addresses); %s is not one. "+
				"From another machine use an SSH tunnel to 127.0.0.1.", hostOnly(r.RemoteAddr)))
			return
		}
		if !loopbackHost(r.Host) {
			refuse(w, http.StatusForbidden, fmt.Sprintf("The mvserver console answers only to loopback host names (localhost, 127.0.0.1, [::1]), not %q.", r.Host))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// refuse writes a plain-text refusal.
func refuse(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintln(w, msg)
}

func (c *Console) readyz(w http.ResponseWriter, r *http.Request) {
	err := error(nil)
	if c.closing.Load() {
		err = errors.New("shutting down")
	} else if c.be.Ready != nil {
		err = c.be.Ready()
	}
	if err != nil {
		refuse(w, http.StatusServiceUnavailable, "not ready: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "ready")
}

// staticHandler serves the embedded assets, cacheable for a while.
func staticHandler(fsys fs.FS) http.Handler {
	files := http.FileServerFS(fsys)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=300")
		files.ServeHTTP(w, r)
	})
}

// request is what the console knows of a page request.
type request struct {
	User    string
	Session *Session
	CSRF    string
	// Logout: the user logged in with a password and may log out.
	Logout bool
}

// page authenticates a console request, gives it a session and checks the
// CSRF token of every POST (invariant 1).
func (c *Console) page(h func(http.ResponseWriter, *http.Request, *request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// No session is created before the request is authenticated: an
		// anonymous visit leaves nothing on the server (invariant 6).
		s := c.sess.lookup(r)
		p, err := c.auth.Authenticate(r, s)
		if err != nil {
			var ae *AuthError
			if errors.As(err, &ae) && ae.LoginURL != "" && r.Method == http.MethodGet {
				http.Redirect(w, r, ae.LoginURL, http.StatusSeeOther)
				return
			}
			status := http.StatusForbidden
			if ae != nil && ae.Status != 0 {
				status = ae.Status
			}
			refuse(w, status, err.Error())
			return
		}
		if s == nil && r.Method != http.MethodPost {
			// A cookie for the CSRF token of the page's forms.
			s = c.sess.ensure(w, r)
		}
		_, login := c.auth.(*PasswordLogin)
		rq := &request{User: p.User, Session: s, Logout: login}
		if r.Method == http.MethodPost {
			if err := r.ParseForm(); err != nil {
				refuse(w, http.StatusBadRequest, "bad form: "+err.Error())
				return
			}
			if !c.sess.checkToken(s, r.PostForm.Get(csrfField)) {
				rq.Session = c.sess.ensure(w, r)
				rq.CSRF = c.sess.token(rq.Session)
				c.fail(w, r, rq, http.StatusForbidden, "The form's security token is missing, wrong or expired (the server may have restarted since the page was loaded). Nothing was done: reload the page and try again.")
				return
			}
		}
		if s != nil {
			rq.CSRF = c.sess.token(s)
		}
		h(w, r, rq)
	})
}

// parsePages parses each page with the shared layout.
func parsePages() (map[string]*template.Template, error) {
	out := map[string]*template.Template{}
	for _, p := range []string{"overview", "dataset", "error", "login"} {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+p+".html")
		if err != nil {
			return nil, err
		}
		out[p] = t
	}
	return out, nil
}

var funcs = template.FuncMap{
	"fmtTime": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"statusClass": statusClass,
	"join":        strings.Join,
	"lower":       strings.ToLower,
	"duration":    func(r refresh.Run) string { return shortDuration(runDuration(r)) },
}

// layout is the data every page's frame needs.
type layout struct {
	Title    string
	User     string
	Logout   bool // show the log-out button
	Database string
	CSRF     string
	Nav      string
	Insights []insight
	// Return is where an action posted from this page leads back to.
	Return string
	// Poll: something on the page is running; the page reloads itself.
	Poll bool
}

// render writes a page; a template error is logged and answered 500.
func (c *Console) render(w http.ResponseWriter, status int, page string, data any) {
	var buf bytes.Buffer
	if err := c.pages[page].Execute(&buf, data); err != nil {
		c.log.Error("console: render", "page", page, "err", err)
		refuse(w, http.StatusInternalServerError, "internal error rendering the page")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

type errorPage struct {
	layout
	Status  int
	Message string
}

func (c *Console) fail(w http.ResponseWriter, r *http.Request, rq *request, status int, msg string) {
	c.render(w, status, "error", errorPage{layout: layout{Title: http.StatusText(status), User: rq.User, Logout: rq.Logout, Database: c.be.Database, CSRF: rq.CSRF}, Status: status, Message: msg})
}

// datasetURL is the console page of a dataset.
func datasetURL(cat *catalog.Catalog, t *catalog.Table) string {
	schema := ""
	if s, ok := cat.SchemaByID(t.SchemaID); ok {
		schema = s.Name
	}
	return "/datasets/" + url.PathEscape(schema) + "/" + url.PathEscape(t.Name)
}

// lookupDataset finds the dataset a URL names.
func lookupDataset(cat *catalog.Catalog, schema, name string) (*catalog.Table, bool) {
	s, ok := cat.Schema(schema)
	if !ok {
		return nil, false
	}
	t, ok := cat.LookupTable(s.ID, name)
	if !ok || !t.IsDataset() {
		return nil, false
	}
	return t, true
}

// canSee returns whether user may read a dataset's page and its line in
// the overview: as for SELECT on it (catalog.Catalog.Allowed: its owner, a
// superuser, or a role granted SELECT). The page shows the definition,
// the run history and refresh errors, which may quote the data's values:
// only those who may read the data see them.
func (c *Console) canSee(cat *catalog.Catalog, user string) func(*catalog.Table) bool {
	return func(t *catalog.Table) bool { return cat.Allowed(user, c.be.RequireRoles, t, catalog.PrivSelect) }
}
