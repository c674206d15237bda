module example.test/catalogs/db

go 1.26.0
