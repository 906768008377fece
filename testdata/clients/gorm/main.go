// Command gorm_session is the GORM session of the client suite
// (clienttest.TestGORM), a module of its own so that GORM and its
// driver stay out of mvserver's module:
//
//	cd testdata/clients/gorm && go build -o gorm_session . && ./gorm_session
//
// The connection comes from PGHOST, PGPORT, PGDATABASE, PGUSER,
// PGPASSWORD and PGSSLMODE (pgx, under gorm.io/driver/postgres, reads
// libpq's environment). AutoMigrate creates the tables of models with
// associations (belongs-to, has-many, many-to-many: foreign keys and a
// join table), reading the catalog first (HasTable, ColumnTypes,
// HasConstraint, HasIndex); a second AutoMigrate after a field was added
// alters the table; then the associations are used (Preload, Association,
// cascade).
//
// Every step starts with a line "=== NAME" and runs on its own: an error
// prints "ERROR <SQLSTATE>" (compared) and "# <message>" (shown, not
// compared).
package main

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// The first version of the models.
type Company struct {
	ID   uint   `gorm:"primaryKey"`
	Name string `gorm:"size:80;not null;uniqueIndex"`
}

type Skill struct {
	ID    uint   `gorm:"primaryKey"`
	Label string `gorm:"size:40;not null"`
}

type Employee struct {
	ID        uint   `gorm:"primaryKey"`
	Name      string `gorm:"size:80;not null;index"`
	CompanyID uint
	Company   Company `gorm:"constraint:OnDelete:CASCADE;"`
	Badges    []Badge `gorm:"constraint:OnDelete:CASCADE;"`
	Skills    []Skill `gorm:"many2many:employee_skills;"`
	Salary    float64 `gorm:"type:numeric(10,2);default:0"`
	Hired     time.Time
}

type Badge struct {
	ID         uint   `gorm:"primaryKey"`
	EmployeeID uint   `gorm:"not null"`
	Code       string `gorm:"size:12;check:code <> ''"`
}

// EmployeeV2 is Employee with a field added (and so a column).
type EmployeeV2 struct {
	ID        uint   `gorm:"primaryKey"`
	Name      string `gorm:"size:80;not null;index"`
	CompanyID uint
	Company   Company `gorm:"constraint:OnDelete:CASCADE;"`
	Badges    []Badge `gorm:"foreignKey:EmployeeID;constraint:OnDelete:CASCADE;"`
	Skills    []Skill `gorm:"many2many:employee_skills;joinForeignKey:EmployeeID"`
	Salary    float64 `gorm:"type:numeric(10,2);default:0"`
	Hired     time.Time
	Email     *string `gorm:"size:120"`
	Level     int     `gorm:"not null;default:1"`
}

func (EmployeeV2) TableName() string { return "employees" }

var db *gorm.DB

func step(name string, body func() error) {
	fmt.Println("=== " + name)
	if err := body(); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			fmt.Println("ERROR " + pe.Code)
		} else {
			fmt.Println("EXCEPTION")
		}
		fmt.Println("# " + strings.Join(strings.Fields(err.Error()), " "))
	}
}

func columns(table string) error {
	cts, err := db.Migrator().ColumnTypes(table)
	if err != nil {
		return err
	}
	// By name: GORM's query has no ORDER BY, so the order its rows come
	// in is the plan's, which GORM does not rely on either.
	sort.Slice(cts, func(i, j int) bool { return cts[i].Name() < cts[j].Name() })
	for _, c := range cts {
		null, _ := c.Nullable()
		pk, _ := c.PrimaryKey()
		uniq, _ := c.Unique()
		def, hasDef := c.DefaultValue()
		length, hasLen := c.Length()
		p, s, hasDec := c.DecimalSize()
		fmt.Printf("%s %s %s null=%v pk=%v unique=%v", table, c.Name(), c.DatabaseTypeName(), null, pk, uniq)
		if hasDef {
			fmt.Printf(" default=%s", def)
		}
		if hasLen {
			fmt.Printf(" length=%d", length)
		}
		if hasDec {
			fmt.Printf(" decimal=%d,%d", p, s)
		}
		fmt.Println()
	}
	return nil
}

func constraints() error {
	var rows []struct{ Table, Name, Type string }
	err := db.Raw(`SELECT tc.table_name AS "table", tc.constraint_name AS name, tc.constraint_type AS type
		FROM information_schema.table_constraints tc
		WHERE tc.table_name IN ('companies', 'employees', 'badges', 'skills', 'employee_skills')
		  AND tc.constraint_type <> 'CHECK' OR tc.constraint_name = 'chk_badges_code'
		ORDER BY 1, 2`).Scan(&rows).Error
	for _, r := range rows {
		fmt.Println(r.Table, r.Name, r.Type)
	}
	return err
}

func main() {
	var err error
	db, err = gorm.Open(postgres.New(postgres.Config{DSN: ""}), &gorm.Config{Logger: logger.Default.LogMode(logger.Silent)})
	if err != nil {
		fmt.Println("# open: " + err.Error())
		os.Exit(1)
	}
	step("AutoMigrate", func() error {
		if err := db.Migrator().DropTable("employee_skills", &Badge{}, &Employee{}, &Skill{}, &Company{}); err != nil {
			return err
		}
		return db.AutoMigrate(&Company{}, &Skill{}, &Employee{}, &Badge{})
	})
	step("AutoMigrate again (nothing to change)", func() error {
		return db.AutoMigrate(&Company{}, &Skill{}, &Employee{}, &Badge{})
	})
	step("Migrator reads", func() error {
		m := db.Migrator()
		tables, err := m.GetTables()
		if err != nil {
			return err
		}
		sort.Strings(tables)
		fmt.Println("tables", tables)
		fmt.Println("has employees", m.HasTable("employees"), "has nothing", m.HasTable("nothing"))
		fmt.Println("fk employees.Company", m.HasConstraint(&Employee{}, "Company"), "fk badges", m.HasConstraint(&Employee{}, "Badges"))
		fmt.Println("check", m.HasConstraint(&Badge{}, "chk_badges_code"))
		fmt.Println("index", m.HasIndex(&Employee{}, "Name"), m.HasIndex(&Company{}, "idx_companies_name"))
		fmt.Println("column", m.HasColumn(&Employee{}, "Salary"), m.HasColumn(&Employee{}, "Email"))
		return nil
	})
	step("ColumnTypes", func() error {
		for _, t := range []string{"companies", "employees", "badges", "employee_skills"} {
			if err := columns(t); err != nil {
				return err
			}
		}
		return nil
	})
	step("constraints", constraints)
	step("create with associations", func() error {
		acme := Company{Name: "acme"}
		e := Employee{Name: "ann", Company: acme, Salary: 10.5, Hired: time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC),
			Badges: []Badge{{Code: "A1"}, {Code: "B2"}}, Skills: []Skill{{Label: "go"}, {Label: "sql"}}}
		if err := db.Create(&e).Error; err != nil {
			return err
		}
		f := Employee{Name: "ben", CompanyID: e.CompanyID, Hired: time.Date(2024, 2, 3, 0, 0, 0, 0, time.UTC)}
		if err := db.Create(&f).Error; err != nil {
			return err
		}
		if err := db.Model(&f).Association("Skills").Append(&e.Skills[1]); err != nil {
			return err
		}
		var all []Employee
		if err := db.Preload("Company").Preload("Badges", func(d *gorm.DB) *gorm.DB { return d.Order("code") }).
			Preload("Skills", func(d *gorm.DB) *gorm.DB { return d.Order("label") }).Order("id").Find(&all).Error; err != nil {
			return err
		}
		for _, x := range all {
			var badges, skills []string
			for _, b := range x.Badges {
				badges = append(badges, b.Code)
			}
			for _, s := range x.Skills {
				skills = append(skills, s.Label)
			}
			fmt.Println(x.ID, x.Name, x.Company.Name, x.Salary, x.Hired.UTC().Format(time.RFC3339), badges, skills)
		}
		return nil
	})
	step("check rejects", func() error {
		return db.Create(&Badge{EmployeeID: 1, Code: ""}).Error
	})
	step("foreign key rejects", func() error {
		return db.Create(&Badge{EmployeeID: 99, Code: "X"}).Error
	})
	step("AutoMigrate with an added column", func() error {
		if err := db.AutoMigrate(&EmployeeV2{}); err != nil {
			return err
		}
		return columns("employees")
	})
	step("after the added column", func() error {
		email := "c@x.org"
		if err := db.Create(&EmployeeV2{Name: "cy", CompanyID: 1, Email: &email, Level: 3, Hired: time.Date(2024, 3, 4, 0, 0, 0, 0, time.UTC)}).Error; err != nil {
			return err
		}
		var rows []EmployeeV2
		if err := db.Order("id").Find(&rows).Error; err != nil {
			return err
		}
		for _, r := range rows {
			e := "<nil>"
			if r.Email != nil {
				e = *r.Email
			}
			fmt.Println(r.ID, r.Name, e, r.Level)
		}
		return nil
	})
	step("cascade", func() error {
		if err := db.Delete(&Company{}, 1).Error; err != nil {
			return err
		}
		var n, b, s int64
		db.Model(&Employee{}).Count(&n)
		db.Model(&Badge{}).Count(&b)
		db.Table("employee_skills").Count(&s)
		fmt.Println("employees", n, "badges", b, "employee_skills", s)
		return nil
	})
	step("transaction", func() error {
		err := db.Transaction(func(tx *gorm.DB) error {
			if err := tx.Create(&Company{Name: "temp"}).Error; err != nil {
				return err
			}
			return errors.New("abort")
		})
		fmt.Println("rolled back:", err)
		var n int64
		db.Model(&Company{}).Count(&n)
		fmt.Println("companies", n)
		return nil
	})
}
