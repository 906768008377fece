package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
)

// Method is an authentication method of an HBA rule.
type Method string

// The methods a rule may name (pg_hba.conf spellings).
const (
	MethodTrust    Method = "trust"
	MethodReject   Method = "reject"
	MethodPassword Method = "password"
	MethodMD5      Method = "md5"
	MethodSCRAM    Method = "scram-sha-256"
)

// ConnType is the first field of an HBA rule.
type ConnType string

// Connection types. hostgssenc never matches (there is no GSS encryption);
// hostnogssenc matches every TCP connection.
const (
	ConnLocal        ConnType = "local"
	ConnHost         ConnType = "host"
	ConnHostSSL      ConnType = "hostssl"
	ConnHostNoSSL    ConnType = "hostnossl"
	ConnHostGSSEnc   ConnType = "hostgssenc"
	ConnHostNoGSSEnc ConnType = "hostnogssenc"
)

// HBA is a host-based authentication rule set in pg_hba.conf form. The
// first rule that matches a connection decides how it authenticates.
type HBA struct {
	Rules []HBARule
}

// HBARule is one line of the file.
type HBARule struct {
	File string // where it was read from, for messages
	Line int
	Type ConnType
	// Databases and Users hold names and the keywords all and sameuser
	// (databases) / all (users). A quoted keyword is a plain name: it is
	// kept with its quotes.
	Databases []string
	Users     []string
	// Addr is the client network of a host* rule; nil matches every
	// address ("all").
	Addr   *net.IPNet
	Method Method
}

// DefaultHBA is what the server uses when a superuser password is set but no
// rules are given: every user authenticates with SCRAM-SHA-256 from a unix
// socket or a loopback address, and every other host is refused.
func DefaultHBA() *HBA {
	h, err := ParseHBA("default", strings.NewReader(
		"local all all scram-sha-256\n"+
			"host all all 127.0.0.1/32 scram-sha-256\n"+
			"host all all ::1/128 scram-sha-256\n"))
	if err != nil {
		panic(err)
	}
	return h
}

// LoadHBA reads and parses a pg_hba.conf file.
func LoadHBA(path string) (*HBA, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseHBA(path, f)
}

// ParseHBA parses rules in pg_hba.conf syntax:
//
//	local      DATABASE USER METHOD
//	host       DATABASE USER ADDRESS METHOD
//	hostssl    DATABASE USER ADDRESS METHOD
//	hostnossl  DATABASE USER ADDRESS METHOD
//
// DATABASE and USER are comma-separated lists of names and keywords; ADDRESS
// is a CIDR block, an IP address followed by a mask in a field of its own,
// or all. "#" starts a comment. Anything the server cannot honour (host
// names, samehost, +group, @file, options after the method, other methods)
// is an error naming name:line, so a rule never silently means something
// else than it says.
func ParseHBA(name string, r io.Reader) (*HBA, error) {
	h := &HBA{}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		fields, err := hbaFields(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		if len(fields) == 0 {
			continue
		}
		rule, err := parseHBARule(fields)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		rule.File, rule.Line = name, line
		h.Rules = append(h.Rules, rule)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return h, nil
}

// hbaToken is one item of a field; quoted items are never keywords.
type hbaToken struct {
	text   string
	quoted bool
}

// hbaFields splits a line into whitespace-separated fields, each a
// comma-separated list of tokens. Double quotes protect spaces, commas
// and keywords; a comma may be followed by spaces.
func hbaFields(line string) ([][]hbaToken, error) {
	var fields [][]hbaToken
	var field []hbaToken
	var cur strings.Builder
	inToken, quoted, inQuotes, afterComma := false, false, false, false
	endToken := func() {
		if inToken {
			field = append(field, hbaToken{text: cur.String(), quoted: quoted})
		}
		cur.Reset()
		inToken, quoted = false, false
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case inQuotes:
			if c == '"' {
				inQuotes = false
			} else {
				cur.WriteByte(c)
			}
		case c == '"':
			inQuotes, inToken, quoted = true, true, true
		case c == '#':
			i = len(line)
		case c == ',':
			endToken()
			afterComma = true
		case c == ' ' || c == '\t' || c == '\r':
			if inToken {
				endToken()
				afterComma = false
				if len(field) > 0 {
					fields = append(fields, field)
					field = nil
				}
			} else if !afterComma && len(field) > 0 {
				fields = append(fields, field)
				field = nil
			}
		default:
			inToken = true
			afterComma = false
			cur.WriteByte(c)
		}
	}
	if inQuotes {
		return nil, fmt.Errorf("unterminated quoted string")
	}
	endToken()
	if afterComma {
		return nil, fmt.Errorf("list ends with a comma")
	}
	if len(field) > 0 {
		fields = append(fields, field)
	}
	return fields, nil
}

func parseHBARule(fields [][]hbaToken) (HBARule, error) {
	var r HBARule
	typ, err := single(fields[0], "connection type")
	if err != nil {
		return r, err
	}
	r.Type = ConnType(typ.text)
	switch r.Type {
	case ConnLocal, ConnHost, ConnHostSSL, ConnHostNoSSL, ConnHostGSSEnc, ConnHostNoGSSEnc:
	default:
		return r, fmt.Errorf("invalid connection type \"%s\" (want local, host, hostssl or hostnossl)", typ.text)
	}
	rest := fields[1:]
	if len(rest) < 2 {
		return r, fmt.Errorf("end-of-line before %s", []string{"database specification", "role specification"}[len(rest)])
	}
	if r.Databases, err = nameList(rest[0], "database"); err != nil {
		return r, err
	}
	if r.Users, err = nameList(rest[1], "role"); err != nil {
		return r, err
	}
	rest = rest[2:]
	if r.Type != ConnLocal {
		if len(rest) == 0 {
			return r, fmt.Errorf("end-of-line before IP address specification")
		}
		n, err := parseHBAAddress(rest)
		if err != nil {
			return r, err
		}
		r.Addr = n.addr
		rest = rest[n.fields:]
	}
	if len(rest) == 0 {
		return r, fmt.Errorf("end-of-line before authentication method")
	}
	m, err := single(rest[0], "authentication method")
	if err != nil {
		return r, err
	}
	r.Method = Method(m.text)
	switch r.Method {
	case MethodTrust, MethodReject, MethodPassword, MethodMD5, MethodSCRAM:
	case "peer", "ident", "gss", "sspi", "pam", "ldap", "radius", "cert", "bsd":
		return r, fmt.Errorf("authentication method \"%s\" is not supported (use trust, reject, md5, password or scram-sha-256)", m.text)
	default:
		return r, fmt.Errorf("invalid authentication method \"%s\"", m.text)
	}
	if len(rest) > 1 {
		return r, fmt.Errorf("authentication option \"%s\" is not supported", rest[1][0].text)
	}
	return r, nil
}

func single(field []hbaToken, what string) (hbaToken, error) {
	if len(field) != 1 {
		return hbaToken{}, fmt.Errorf("multiple values specified for %s", what)
	}
	return field[0], nil
}

// nameList checks a database or role list; keywords stay bare, a quoted
// keyword keeps its quotes so it matches only that name.
func nameList(field []hbaToken, what string) ([]string, error) {
	var out []string
	for _, t := range field {
		if t.quoted {
			switch t.text {
			case "all", "sameuser", "samerole", "samegroup", "replication":
				out = append(out, `"`+t.text+`"`)
				continue
			}
			out = append(out, t.text)
			continue
		}
		switch {
		case t.text == "":
			return nil, fmt.Errorf("empty %s name", what)
		case strings.HasPrefix(t.text, "@"):
			return nil, fmt.Errorf("file inclusion \"%s\" is not supported", t.text)
		case strings.HasPrefix(t.text, "/"):
			return nil, fmt.Errorf("regular expression \"%s\" is not supported", t.text)
		case what == "role" && strings.HasPrefix(t.text, "+"):
			return nil, fmt.Errorf("group membership \"%s\" is not supported (roles have no members)", t.text)
		case what == "database" && (t.text == "samerole" || t.text == "samegroup"):
			return nil, fmt.Errorf("\"%s\" is not supported (roles have no members)", t.text)
		}
		out = append(out, t.text)
	}
	return out, nil
}

type hbaAddress struct {
	addr   *net.IPNet
	fields int // how many fields it took (2 for IP MASK)
}

func parseHBAAddress(rest [][]hbaToken) (hbaAddress, error) {
	tok, err := single(rest[0], "IP address")
	if err != nil {
		return hbaAddress{}, err
	}
	s := tok.text
	switch {
	case s == "all" && !tok.quoted:
		return hbaAddress{nil, 1}, nil
	case (s == "samehost" || s == "samenet") && !tok.quoted:
		return hbaAddress{}, fmt.Errorf("\"%s\" is not supported; give the address as CIDR", s)
	}
	if strings.Contains(s, "/") {
		_, n, err := net.ParseCIDR(s)
		if err != nil {
			return hbaAddress{}, fmt.Errorf("invalid IP address \"%s\"", s)
		}
		return hbaAddress{n, 1}, nil
	}
	ip := net.ParseIP(s)
	if ip == nil {
		return hbaAddress{}, fmt.Errorf("invalid IP address \"%s\" (host names are not supported; give a CIDR block)", s)
	}
	if len(rest) < 2 {
		return hbaAddress{}, fmt.Errorf("end-of-line before netmask specification")
	}
	m, err := single(rest[1], "netmask")
	if err != nil {
		return hbaAddress{}, err
	}
	mask := net.ParseIP(m.text)
	if mask == nil {
		return hbaAddress{}, fmt.Errorf("invalid IP mask \"%s\"", m.text)
	}
	if ip4 := ip.To4(); ip4 != nil {
		mask4 := mask.To4()
		if mask4 == nil {
			return hbaAddress{}, fmt.Errorf("IP address and mask do not match")
		}
		ip, mask = ip4, mask4
	} else if mask.To4() != nil {
		return hbaAddress{}, fmt.Errorf("IP address and mask do not match")
	}
	im := net.IPMask(mask)
	if ones, bits := im.Size(); ones == 0 && bits == 0 {
		return hbaAddress{}, fmt.Errorf("invalid IP mask \"%s\": not a prefix", m.text)
	}
	return hbaAddress{&net.IPNet{IP: ip.Mask(im), Mask: im}, 2}, nil
}

// Match returns the first rule for a connection from info.RemoteAddr (a
// unix socket matches only local rules, TCP only host* ones), encrypted
// with TLS or not, asking for info.Database as info.User; nil when none.
func (h *HBA) Match(info StartupInfo, encrypted bool) *HBARule {
	var ip net.IP
	local := false
	switch a := info.RemoteAddr.(type) {
	case *net.UnixAddr:
		local = true
	case *net.TCPAddr:
		ip = a.IP
	case *net.IPAddr:
		ip = a.IP
	default:
		return nil
	}
	for i := range h.Rules {
		r := &h.Rules[i]
		switch r.Type {
		case ConnLocal:
			if !local {
				continue
			}
		case ConnHost, ConnHostNoGSSEnc:
			if local {
				continue
			}
		case ConnHostSSL:
			if local || !encrypted {
				continue
			}
		case ConnHostNoSSL:
			if local || encrypted {
				continue
			}
		default: // hostgssenc
			continue
		}
		if r.Addr != nil && (ip == nil || !r.Addr.Contains(ip)) {
			continue
		}
		if !matchName(r.Databases, info.Database, info.User, true) || !matchName(r.Users, info.User, "", false) {
			continue
		}
		return r
	}
	return nil
}

func matchName(list []string, name, user string, database bool) bool {
	for _, n := range list {
		switch {
		case n == "all":
			return true
		case database && n == "sameuser":
			if name == user {
				return true
			}
		case database && n == "replication":
			// Only replication connections, which the server does not take.
		case n == name:
			return true
		case len(n) > 2 && n[0] == '"' && n[len(n)-1] == '"' && n[1:len(n)-1] == name:
			return true // a quoted keyword used as a name
		}
	}
	return false
}

// HostSSL returns the first hostssl rule, for a server without TLS to
// refuse a rule that can never match (PostgreSQL does the same).
func (h *HBA) HostSSL() (HBARule, bool) {
	for _, r := range h.Rules {
		if r.Type == ConnHostSSL {
			return r, true
		}
	}
	return HBARule{}, false
}
