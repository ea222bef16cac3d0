//! Emulates a scenario given as JSON (as `aqmlab.Scenario.to_json` writes
//! it) and prints the result: `emulate_json SCENARIO.json [SEED]`.

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: emulate_json SCENARIO.json [SEED]");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2)
    });
    let seed = args.get(2).map(|s| s.parse().expect("a whole number seed"));
    match aqmlab_emu::emulate_json(&text, seed) {
        Ok(out) => println!("{out}"),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    }
}
