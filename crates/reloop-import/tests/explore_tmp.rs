mod common;
use reloop_import::ImportOptions;
#[test]
fn explore() {
    for (name, path) in common::transcript_files() {
        match common::parse_file(&name, &path, &ImportOptions::default()) {
            Ok(imp) => {
                let s = &imp.summary;
                println!("OK {name}: events {} prompts {} resp {} tr {} int {} synthA {} synthT {} withheld {} meta {} phase {} skipped {:?}", imp.events.len(), s.prompts, s.responses, s.tool_results, s.interrupts, s.synthesized_aborts, s.synthesized_tool_results, s.withheld_tool_results, s.meta_prompts, s.final_phase, s.skipped);
                let (h, steps) = common::journal(&imp, "x");
                let st = common::assert_replays(&h, &steps);
                common::assert_well_formed(&st);
            }
            Err(e) => println!("ERR {name}: {e}"),
        }
    }
}
