//! The seed scenario: a model looks for the login code, then reads it.

mod common;

use common::{abs, Workspace};
use serde_json::json;

const LOGIN_TS: &str = "export interface Credentials {\n  username: string;\n  password: string;\n}\n\nexport function login(c: Credentials): boolean {\n  return c.username.length > 0 && c.password.length > 0;\n}\n";

#[test]
fn grep_finds_the_login_file_and_read_shows_it_numbered() {
    let ws = Workspace::new();
    let login = ws.file("src/auth/login.ts", LOGIN_TS);
    ws.file("src/index.ts", "console.log('hello');\n");
    ws.file("README.md", "login and auth docs live elsewhere\n");

    let found = ws.ok("Grep", json!({"pattern": "login|auth", "path": "src", "output_mode": "files_with_matches"}));
    assert_eq!(found, "Found 1 file\nsrc/auth/login.ts");

    let read = ws.ok("Read", json!({"file_path": abs(&login)}));
    assert_eq!(
        read,
        "1\texport interface Credentials {\n\
         2\t  username: string;\n\
         3\t  password: string;\n\
         4\t}\n\
         5\t\n\
         6\texport function login(c: Credentials): boolean {\n\
         7\t  return c.username.length > 0 && c.password.length > 0;\n\
         8\t}\n\
         9\t"
    );
    assert!(ws.ctx.was_read(&login), "Read records the file for Write/Edit");
}
