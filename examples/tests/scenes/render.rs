//! The examples' offscreen renderer on the GPU adapter: depth ordering, the background, the
//! PNG files of `--png` (named to sort, every k-th frame), and no allocation after the first
//! frame.

use glam::Vec3;
use raycontact_examples::render::{Camera, Mesh, PngFrames, Renderer};

/// A square of side 2 at height z, normals +z.
fn square(z: f32) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let p = vec![
        Vec3::new(-1.0, -1.0, z),
        Vec3::new(1.0, -1.0, z),
        Vec3::new(1.0, 1.0, z),
        Vec3::new(-1.0, 1.0, z),
    ];
    (p, vec![[0, 1, 2], [0, 2, 3]])
}

fn camera() -> Camera {
    Camera { eye: Vec3::new(0.0, 0.0, 5.0), target: Vec3::ZERO, up: Vec3::Y, fov_y: 0.8 }
}

#[test]
fn nearer_triangles_hide_farther_ones_and_frames_are_written_in_order() {
    let ctx = super::ctx();
    let mut r = Renderer::new(ctx.device(), ctx.queue(), 64, 48).unwrap();
    let (near, tris) = square(1.0);
    let (far, _) = square(0.0);
    let red = Mesh { positions: &near, triangles: &tris, color: [1.0, 0.0, 0.0], smooth: true };
    let blue = Mesh { positions: &far, triangles: &tris, color: [0.0, 0.0, 1.0], smooth: false };
    // Drawn far-to-near and near-to-far: the depth test decides, not the order.
    for meshes in [[blue, red], [red, blue]] {
        let img = r.render(&camera(), &meshes).unwrap();
        assert_eq!((img.width, img.height, img.rgba.len()), (64, 48, 64 * 48 * 4));
        let [cr, cg, cb, _] = img.pixel(32, 24);
        assert!(
            cr > 150 && cg < 40 && cb < 40,
            "the nearer red square in the middle: {:?}",
            img.pixel(32, 24)
        );
        let [br, bg, bb, _] = img.pixel(0, 0);
        assert!(br > 150 && bg > 150 && bb > 150, "background in the corner: {:?}", img.pixel(0, 0));
    }
    // Behind the red square only the blue one: move the red one away.
    let (aside, _) = square(1.0);
    let aside: Vec<Vec3> = aside.iter().map(|p| *p + Vec3::X * 10.0).collect();
    let red_aside = Mesh { positions: &aside, ..red };
    let img = r.render(&camera(), &[blue, red_aside]).unwrap();
    let [cr, _, cb, _] = img.pixel(32, 24);
    assert!(cb > 100 && cr < 40, "the blue square, lit flat: {:?}", img.pixel(32, 24));
    let created = r.allocations();
    r.render(&camera(), &[blue, red_aside]).unwrap();
    assert_eq!(r.allocations(), created, "no buffer created after the first frame of the same meshes");

    let dir = std::env::temp_dir().join(format!("raycontact-render-test-{}", std::process::id()));
    let mut frames = PngFrames::new(r, &dir, "test", 2, camera()).unwrap();
    for i in 0..5 {
        frames.frame(i, &[blue, red]).unwrap();
    }
    assert_eq!(frames.written(), 3);
    let mut names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["test_000000.png", "test_000002.png", "test_000004.png"]);
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(frames.path(2)).unwrap()));
    let reader = decoder.read_info().unwrap();
    assert_eq!((reader.info().width, reader.info().height), (64, 48));
    std::fs::remove_dir_all(&dir).unwrap();
}
