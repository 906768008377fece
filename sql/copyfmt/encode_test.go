package copyfmt

import "testing"

// oracleValues are the values of the table the expectations below were
// taken from: PostgreSQL 15's COPY … TO STDOUT output for
//
//	CREATE TABLE e (id int, v text); INSERT … (these values, id 1…20)
//
// nil is NULL.
var oracleValues = [][]byte{
	[]byte("plain"), []byte(""), nil, []byte("tab\there"), []byte("nl\nx"),
	[]byte("cr\rx"), []byte(`back\slash`), []byte("com,ma"), []byte(`quo"te`), []byte(`\.`),
	[]byte(`\N`), []byte("\x01\x02\x7f"), []byte("bs\b ff\f vtv"), []byte("héllo ünï"), []byte(" lead"),
	[]byte("semi;colon"), []byte("pipe|x"), []byte(`\`), []byte(`"`), []byte("NULL"),
}

func encodeOracle(opts Options, withID, header bool, names ...string) string {
	ncols := 1
	if withID {
		ncols = 2
	}
	e := NewEncoder(opts, ncols)
	var out []byte
	if header {
		out = e.AppendHeader(out, names)
	}
	for i, v := range oracleValues {
		col := 0
		if withID {
			out = e.AppendField(out, 0, []byte(itoa(i+1)))
			col = 1
		}
		if v == nil {
			out = e.AppendNull(out, col)
		} else {
			out = e.AppendField(out, col, v)
		}
		out = e.AppendEnd(out)
	}
	return string(out)
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func TestEncodeMatchesPostgres(t *testing.T) {
	csvQ := CSVOptions()
	csvQ.Delimiter, csvQ.Null, csvQ.Quote, csvQ.Escape = ';', "NULL", '\'', '\\'
	csvQ.ForceQuote = []bool{false, true}
	csvAll := CSVOptions()
	csvAll.ForceQuoteAll = true
	pipe := TextOptions()
	pipe.Delimiter, pipe.Null = '|', ""
	ctl := TextOptions()
	ctl.Delimiter = '\x01'
	for _, tc := range []struct {
		name   string
		opts   Options
		withID bool
		header []string
		want   string
	}{
		{"text one column", TextOptions(), false, nil,
			"plain\n\n\\N\ntab\\there\nnl\\nx\ncr\\rx\nback\\\\slash\ncom,ma\nquo\"te\n\\\\.\n\\\\N\n\x01\x02\x7f\nbs\\b ff\\f vtv\nhéllo ünï\n lead\nsemi;colon\npipe|x\n\\\\\n\"\nNULL\n"},
		{"text", TextOptions(), true, nil,
			"1\tplain\n2\t\n3\t\\N\n4\ttab\\there\n5\tnl\\nx\n6\tcr\\rx\n7\tback\\\\slash\n8\tcom,ma\n9\tquo\"te\n10\t\\\\.\n11\t\\\\N\n12\t\x01\x02\x7f\n13\tbs\\b ff\\f vtv\n14\théllo ünï\n15\t lead\n16\tsemi;colon\n17\tpipe|x\n18\t\\\\\n19\t\"\n20\tNULL\n"},
		{"csv", CSVOptions(), true, nil,
			"1,plain\n2,\"\"\n3,\n4,tab\there\n5,\"nl\nx\"\n6,\"cr\rx\"\n7,back\\slash\n8,\"com,ma\"\n9,\"quo\"\"te\"\n10,\\.\n11,\\N\n12,\x01\x02\x7f\n13,bs\b ff\f vtv\n14,héllo ünï\n15, lead\n16,semi;colon\n17,pipe|x\n18,\\\n19,\"\"\"\"\n20,NULL\n"},
		{"csv one column quotes a lone \\.", CSVOptions(), false, nil,
			"plain\n\"\"\n\ntab\there\n\"nl\nx\"\n\"cr\rx\"\nback\\slash\n\"com,ma\"\n\"quo\"\"te\"\n\"\\.\"\n\\N\n\x01\x02\x7f\nbs\b ff\f vtv\nhéllo ünï\n lead\nsemi;colon\npipe|x\n\\\n\"\"\"\"\nNULL\n"},
		{"csv header delimiter null quote escape force_quote", csvQ, true, []string{"id", "v"},
			"id;v\n1;'plain'\n2;''\n3;NULL\n4;'tab\there'\n5;'nl\nx'\n6;'cr\rx'\n7;'back\\\\slash'\n8;'com,ma'\n9;'quo\"te'\n10;'\\\\.'\n11;'\\\\N'\n12;'\x01\x02\x7f'\n13;'bs\b ff\f vtv'\n14;'héllo ünï'\n15;' lead'\n16;'semi;colon'\n17;'pipe|x'\n18;'\\\\'\n19;'\"'\n20;'NULL'\n"},
		{"csv force_quote *", csvAll, true, nil,
			"\"1\",\"plain\"\n\"2\",\"\"\n\"3\",\n\"4\",\"tab\there\"\n\"5\",\"nl\nx\"\n\"6\",\"cr\rx\"\n\"7\",\"back\\slash\"\n\"8\",\"com,ma\"\n\"9\",\"quo\"\"te\"\n\"10\",\"\\.\"\n\"11\",\"\\N\"\n\"12\",\"\x01\x02\x7f\"\n\"13\",\"bs\b ff\f vtv\"\n\"14\",\"héllo ünï\"\n\"15\",\" lead\"\n\"16\",\"semi;colon\"\n\"17\",\"pipe|x\"\n\"18\",\"\\\"\n\"19\",\"\"\"\"\n\"20\",\"NULL\"\n"},
		{"text header delimiter null", pipe, true, []string{"id", "v"},
			"id|v\n1|plain\n2|\n3|\n4|tab\\there\n5|nl\\nx\n6|cr\\rx\n7|back\\\\slash\n8|com,ma\n9|quo\"te\n10|\\\\.\n11|\\\\N\n12|\x01\x02\x7f\n13|bs\\b ff\\f vtv\n14|héllo ünï\n15| lead\n16|semi;colon\n17|pipe\\|x\n18|\\\\\n19|\"\n20|NULL\n"},
		{"csv header quoted", CSVOptions(), true, []string{"id", "we,ird"},
			"id,\"we,ird\"\n1,plain\n2,\"\"\n3,\n4,tab\there\n5,\"nl\nx\"\n6,\"cr\rx\"\n7,back\\slash\n8,\"com,ma\"\n9,\"quo\"\"te\"\n10,\\.\n11,\\N\n12,\x01\x02\x7f\n13,bs\b ff\f vtv\n14,héllo ünï\n15, lead\n16,semi;colon\n17,pipe|x\n18,\\\n19,\"\"\"\"\n20,NULL\n"},
		{"text control-character delimiter", ctl, true, nil,
			"1\x01plain\n2\x01\n3\x01\\N\n4\x01tab\\there\n5\x01nl\\nx\n6\x01cr\\rx\n7\x01back\\\\slash\n8\x01com,ma\n9\x01quo\"te\n10\x01\\\\.\n11\x01\\\\N\n12\x01\\\x01\x02\x7f\n13\x01bs\\b ff\\f vtv\n14\x01héllo ünï\n15\x01 lead\n16\x01semi;colon\n17\x01pipe|x\n18\x01\\\\\n19\x01\"\n20\x01NULL\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := encodeOracle(tc.opts, tc.withID, tc.header != nil, tc.header...)
			if got != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}
