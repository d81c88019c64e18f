//! Loading any text as crawler.toml never panics; a refusal is one line naming the source,
//! and a configuration that loads writes back to TOML that loads to the same thing.
#![no_main]

use crawldedup::Config;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match Config::from_toml_str(&text, "fuzz.toml", &[]) {
        Err(e) => {
            let line = e.to_string();
            assert!(!line.contains('\n'), "{line:?}");
            assert!(line.starts_with("fuzz.toml"), "{line:?}");
        }
        Ok(config) => {
            let written = toml::to_string(&config).expect("a loaded config serializes");
            let again = Config::from_toml_str(&written, "written", &[])
                .unwrap_or_else(|e| panic!("{written}\n{e}"));
            assert_eq!(again, config);
        }
    }
});
