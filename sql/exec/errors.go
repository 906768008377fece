package exec

import "github.com/mvserver/mvserver/pgerror"

func pgErr(code, format string, args ...any) error { return pgerror.New(code, format, args...) }
